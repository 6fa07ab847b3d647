package user

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
