package hookwire

const sysGetrandom = 278 // syscall.SYS_GETRANDOM
