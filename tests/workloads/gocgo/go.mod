module gocgo

go 1.19
