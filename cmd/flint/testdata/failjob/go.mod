module example.com/failjob

go 1.26
