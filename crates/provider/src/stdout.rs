//! What the commands print: `out!` and `outln!` write to standard output like `print!`
//! and `println!`, but a reader that went away (`offers | head`) ends the command quietly
//! with success instead of a panic about a broken pipe.

use std::io::{ErrorKind, Write};

/// Writes `args` to standard output; on a closed pipe the process exits with success, on
/// any other write error with a one-line message and failure.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        exit_on(&e);
    }
}

/// Ends the process for a failed write to standard output.
pub fn exit_on(e: &std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("terraform-provider-gpu: cannot write to standard output: {e}");
    std::process::exit(1)
}

/// `print!` that ends quietly on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::write(format_args!($($arg)*)) };
}

/// `println!` that ends quietly on a closed pipe.
macro_rules! outln {
    () => { $crate::stdout::write(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
