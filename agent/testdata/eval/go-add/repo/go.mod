module goadd

go 1.21
