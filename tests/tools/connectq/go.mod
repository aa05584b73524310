module kiln.test/connectq

go 1.21

require (
	connectrpc.com/connect v1.18.1
	github.com/grafana/pyroscope/api v1.6.0
)
