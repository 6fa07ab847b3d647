module github.com/pippet/pippet

go 1.26.8

require (
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
