module demo

go 1.26
