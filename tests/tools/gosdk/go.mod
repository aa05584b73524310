module kiln.test/gosdk

go 1.22

require github.com/grafana/pyroscope-go v1.2.7
