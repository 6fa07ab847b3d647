module github.com/pippet/pippet

go 1.26.8
