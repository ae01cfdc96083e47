module goreverse

go 1.21
