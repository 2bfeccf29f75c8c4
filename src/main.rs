//! The `rootbound` binary: parse the command line, set up logging on stderr,
//! then serve MCP over stdio (or run one call, or print the tool list).

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use rootbound::{
    Cli, Command, Guard, LogLevel, Registry, RootboundServer, SUPERVISOR_ARG, State,
    StdioTransport, print_sandbox, print_tools, run_call, run_history, run_setup, run_supervisor,
    run_undo,
};

fn main() -> ExitCode {
    #[cfg(unix)]
    rootbound::take_back_child_signals();
    // A bash call's supervisor is this binary started again; it must not
    // parse options, log or start a runtime.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(SUPERVISOR_ARG) {
        #[cfg(target_os = "linux")]
        if args.get(1).map(String::as_str) == Some("probe") {
            return ExitCode::from(u8::try_from(rootbound::print_probe()).unwrap_or(1));
        }
        let code = run_supervisor(&args[1..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // Descriptors the client left open must not reach bash's commands.
    #[cfg(unix)]
    rootbound::close_on_exec_from(3);
    let cli = Cli::from_env();
    init_logging(cli.log_level);
    // Setup edits a client's configuration: it needs no roots, guard or
    // runtime, so it runs before they are checked and built.
    if let Some(Command::Setup(args)) = &cli.command {
        return ExitCode::from(u8::try_from(run_setup(args)).unwrap_or(1));
    }
    // So do history and undo, which work on the journal's own roots.
    if let Some(Command::History(_) | Command::Undo(_)) = &cli.command {
        let journal = match cli.journal() {
            Ok(journal) => journal,
            Err(message) => return usage_error(&message),
        };
        let state_dir = journal.state_dir();
        let code = match &cli.command {
            Some(Command::History(args)) => run_history(args, state_dir.as_deref(), journal.limits),
            Some(Command::Undo(args)) => run_undo(args, state_dir.as_deref(), journal.limits),
            _ => 2,
        };
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    std::panic::set_hook(Box::new(|info| {
        tracing::error!("panic: {info}");
    }));
    // A file-size limit (RLIMIT_FSIZE) must fail the write, not kill the server.
    // SAFETY: setting a signal to SIG_IGN before any thread starts.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }

    let config = match cli.config() {
        Ok(config) => config,
        Err(message) => return usage_error(&message),
    };
    let mut guard = match Guard::new(&config.roots) {
        Ok(guard) => guard,
        Err(e) => return usage_error(&e.to_string()),
    };
    if let Err(message) = guard.unprotect(&config.unprotect) {
        return usage_error(&message.to_string());
    }
    if guard.roots().any(|r| r == std::path::Path::new("/")) {
        tracing::warn!("a root is '/': every file on this machine is within reach of the tools");
    }
    let registry = Arc::new(Registry::new(Arc::new(State::new(guard, config))));

    // One thread runs the protocol loop and the small file work inline: on a
    // VM, every hand-off to another thread costs more than a whole small
    // read. Large or long work goes to the blocking pool (`tools::run_sized`).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return usage_error(&format!("cannot start the async runtime: {e}")),
    };
    let code = match cli.command {
        Some(Command::Tools) => print_tools(&registry),
        Some(Command::Sandbox) => print_sandbox(&registry.state().config),
        // Returned above; kept here so the match stays exhaustive without a panic.
        Some(Command::Setup(args)) => run_setup(&args),
        Some(Command::History(_) | Command::Undo(_)) => 2,
        Some(Command::Call { tool, json }) => {
            runtime.block_on(run_call(&registry, &tool, json.as_deref()))
        }
        None => runtime.block_on(serve(registry.clone())),
    };
    // Do not wait for blocking reads of stdin that will never finish.
    runtime.shutdown_background();
    if let Some(shell) = &registry.state().shell {
        shell.finish();
    }
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

async fn serve(registry: Arc<Registry>) -> i32 {
    if let Some(shell) = &registry.state().shell {
        shell.start_sandbox();
    }
    registry.state().sweep_at_start();
    let roots = registry.state().guard.roots_display();
    tracing::info!(roots = %roots, tools = ?registry.names(), "serving MCP on stdio");
    let service = match RootboundServer::new(registry)
        .serve(StdioTransport::open())
        .await
    {
        Ok(service) => service,
        // A client that only probes (`server/discover`, or nothing at all)
        // and hangs up: a normal end, not a failure.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::debug!("the client closed the connection before a session started");
            return 0;
        }
        Err(e) => {
            tracing::error!("the MCP session did not start: {e}");
            return 1;
        }
    };
    match service.waiting().await {
        Ok(reason) => {
            tracing::info!(?reason, "MCP session ended");
            0
        }
        Err(e) => {
            tracing::error!("the MCP session failed: {e}");
            1
        }
    }
}

fn init_logging(level: LogLevel) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level.as_str()));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("rootbound: {message}");
    ExitCode::from(2)
}
