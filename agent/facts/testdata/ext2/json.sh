#!/bin/sh
cat <<X
{"script_json": {"deep": true}}
X
