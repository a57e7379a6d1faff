module github.com/flint-mesos/flint

go 1.26.0

require github.com/gogo/protobuf v1.3.2
