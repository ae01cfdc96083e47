module goclamp

go 1.21
