fn main() {
    std::process::exit(evalgate::main_with_args(std::env::args_os()));
}
