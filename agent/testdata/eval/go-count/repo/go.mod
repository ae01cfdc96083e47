module gocount

go 1.21
