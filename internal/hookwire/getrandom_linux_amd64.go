package hookwire

const sysGetrandom = 318
