package tidy

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
