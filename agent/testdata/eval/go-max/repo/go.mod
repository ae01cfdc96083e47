module gomax

go 1.21
