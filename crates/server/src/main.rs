//! `quire-server`: the Quire service binary. It reads configuration, builds the adapters
//! (database, bundle storage), has the composition root (`quire-app`) build the services on
//! them, and runs the listeners, migrations or an admin command. It is the only crate that
//! knows every adapter. By concern: `cli`, `config`, `telemetry`, `wiring` (adapters and
//! settings), `serve` (start-up: `prepare`, the connection budget, a function per
//! listener), `exporter` (the metrics endpoint), `quota_gauges` (who is near a quota, for
//! it), `tasks` (janitor, view flush), `admin` (accounts, passwords, the invitation list,
//! the mail test, the sealing key's rotation), `backup` (`admin backup` and
//! `admin restore`), `error` (what stops it, with its cause).

mod admin;
mod backup;
mod cli;
mod config;
mod databases;
mod error;
mod exporter;
mod quota_gauges;
mod serve;
mod tasks;
mod telemetry;
mod wiring;

use std::process::ExitCode;

use clap::Parser;
use quire_accounts::CreateAccount;

use crate::admin::{
    create_account, invite, mail_test, read_password_line, rotate_secret_key, set_activated,
    set_password,
};
use crate::cli::{AdminCommand, Cli, Command};
use crate::config::Config;
use crate::error::ServerError;
use crate::serve::serve;
use crate::telemetry::init_logging;
use crate::wiring::{connect, migrate};

/// jemalloc, whose background thread gives memory freed after a burst of connections back
/// to the system within seconds, where glibc's arenas kept most of it for good
/// (`docs/decisions/memory-under-floods.md`).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quire-server: {}", e.chain());
            ExitCode::from(e.exit_code())
        }
    }
}

async fn run(cli: Cli) -> Result<(), ServerError> {
    let config = Config::load(cli.config.as_deref(), |k| std::env::var(k).ok())?;
    init_logging(&config.log_format);
    let db = connect(&config)?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config, db).await,
        Command::Migrate => migrate(&db).await,
        Command::Admin {
            command:
                AdminCommand::CreateAccount {
                    email,
                    handle,
                    password,
                    platform_admin,
                    not_activated,
                },
        } => {
            let created = create_account(
                db,
                CreateAccount {
                    email,
                    handle,
                    password,
                    platform_admin,
                    activated: !not_activated,
                },
            )
            .await?;
            #[allow(clippy::print_stdout)]
            {
                println!("{created}");
            }
            Ok(())
        }
        Command::Admin {
            command:
                AdminCommand::SetPassword {
                    login,
                    password,
                    password_stdin,
                },
        } => {
            let password = match password {
                Some(p) if !password_stdin => p,
                _ => read_password_line()?,
            };
            set_password(db, &login, &password).await?;
            eprintln!("quire-server: password set for {login}");
            Ok(())
        }
        Command::Admin {
            command: AdminCommand::Activate { login },
        } => {
            let line = set_activated(db, &login, true).await?;
            eprintln!("quire-server: {line}");
            Ok(())
        }
        Command::Admin {
            command: AdminCommand::Deactivate { login },
        } => {
            let line = set_activated(db, &login, false).await?;
            eprintln!("quire-server: {line}");
            Ok(())
        }
        Command::Admin {
            command: AdminCommand::Invite { command },
        } => {
            let report = invite(db, command).await?;
            #[allow(clippy::print_stdout)]
            {
                println!("{}", report.trim_end());
            }
            Ok(())
        }
        Command::Admin {
            command: AdminCommand::RotateSecretKey { new_key_file },
        } => {
            let done = rotate_secret_key(db, &config, &new_key_file).await?;
            #[allow(clippy::print_stdout)]
            {
                println!("{done}");
            }
            eprintln!(
                "quire-server: re-sealed under {}; start every replica with \
                 QUIRE_SECRET_KEY_FILE naming it, and keep the old file until they run",
                new_key_file.display()
            );
            Ok(())
        }
        Command::Admin {
            command: AdminCommand::Backup { dir },
        } => {
            drop(db);
            tokio::task::spawn_blocking(move || backup::backup(&config, &dir))
                .await
                .map_err(|e| ServerError::Backup(e.to_string()))?
        }
        Command::Admin {
            command: AdminCommand::Restore { dir },
        } => {
            drop(db);
            tokio::task::spawn_blocking(move || backup::restore(&config, &dir))
                .await
                .map_err(|e| ServerError::Restore(e.to_string()))?
        }
        Command::Admin {
            command: AdminCommand::MailTest { to },
        } => {
            let answer = mail_test(&config, &to).await?;
            #[allow(clippy::print_stdout)]
            {
                println!("{answer}");
            }
            Ok(())
        }
    }
}
