module kiln.test/gospans

go 1.23

require (
	github.com/grafana/otel-profiling-go v0.5.1
	github.com/grafana/pyroscope-go v1.2.7
	go.opentelemetry.io/otel/sdk v1.34.0
)
