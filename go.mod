module github.com/toolbelt/toolbelt

go 1.26

require (
	github.com/google/jsonschema-go v0.4.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.14.0
)

require github.com/alecthomas/kong v1.17.0
