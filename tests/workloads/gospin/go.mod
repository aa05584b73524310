module gospin

go 1.19
