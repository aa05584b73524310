module kiln.test/otlpq

go 1.24

require go.opentelemetry.io/collector/pdata/pprofile v0.165.0
