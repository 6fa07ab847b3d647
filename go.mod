module github.com/pippet/pippet

go 1.24.0

require (
	github.com/goccy/go-json v0.12.0
	github.com/stretchr/testify v1.12.1
	gopkg.in/yaml.v3 v3.0.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
