<?php
// A request of the php-fpm test: Controller::handle -> render -> checksum, about 0.1 s
// of CPU, then the answer. Long enough that few samples fall between two requests (kiln
// reads the PHP stack a little after the kernel took the native one).

class Controller
{
    public function handle($n)
    {
        return render($n); // LINE:handle
    }
}

function checksum($n)
{
    $x = 0;
    for ($i = 0; $i < $n; $i++) {
        $x = ($x + $i) & 0xffff; // LINE:checksum
    }
    return $x;
}

function render($n)
{
    return "sum " . checksum($n) . "\n"; // LINE:render
}

echo (new Controller())->handle(8000000);
