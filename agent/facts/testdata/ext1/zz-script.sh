#!/bin/sh
echo script_fact=from script
echo role=overridden
