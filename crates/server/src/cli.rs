//! The command line: `serve` (the default), `migrate` and the operator's `admin` commands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "quire-server",
    version,
    about = "Quire: publish static sites as pages"
)]
pub(crate) struct Cli {
    /// Configuration file (default: ./quire.toml when it exists). QUIRE_* variables win.
    #[arg(long, env = "QUIRE_CONFIG", global = true)]
    pub(crate) config: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run migrations, then serve (the default).
    Serve,
    /// Run pending migrations and exit.
    Migrate,
    /// Operator commands.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum AdminCommand {
    /// Create an account with its default project and a master key; prints JSON.
    CreateAccount {
        #[arg(long)]
        email: String,
        #[arg(long)]
        handle: String,
        /// Password for the dashboard (at least 8 characters).
        #[arg(long)]
        password: Option<String>,
        #[arg(long)]
        platform_admin: bool,
        #[arg(long)]
        not_activated: bool,
    },
    /// Set the dashboard password of an account (by email or handle).
    SetPassword {
        /// Email or handle of the account.
        #[arg(long)]
        login: String,
        /// The new password (at least 8 characters). Visible to other local users in the
        /// process list; prefer --password-stdin.
        #[arg(
            long,
            conflicts_with = "password_stdin",
            required_unless_present = "password_stdin"
        )]
        password: Option<String>,
        /// Read the new password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Activate an account (by email or handle) without an invitation: its keys and tokens
    /// work on every route.
    Activate {
        /// Email or handle of the account.
        login: String,
    },
    /// Deactivate an account (by email or handle): its keys and tokens answer
    /// `not_activated` until it is activated again; its pages stay as they are.
    Deactivate {
        /// Email or handle of the account.
        login: String,
    },
    /// The invitation list: the phone numbers that may activate an account.
    Invite {
        #[command(subcommand)]
        command: InviteCommand,
    },
    /// Re-seal every sealed secret (second-factor secrets, signing keys) from the key in
    /// QUIRE_SECRET_KEY_FILE to the key in --new-key-file (made, mode 0600, when missing),
    /// in one transaction; prints what it re-sealed. Stop every replica first, and start
    /// them again with QUIRE_SECRET_KEY_FILE naming the new file.
    RotateSecretKey {
        /// The new key file: 64 hexadecimal digits, or a path where none exists yet.
        #[arg(long)]
        new_key_file: PathBuf,
    },
    /// Copy the database (SQLite online, while servers run; PostgreSQL: prints the pg_dump
    /// to run), the bundles on local disk and the key file into DIR, a new or empty
    /// directory, with a manifest.json. See docs/operations.md, "Backups".
    Backup {
        /// The directory to fill (made when missing; must be empty).
        dir: PathBuf,
    },
    /// Put a backup made by `admin backup` back: the database file, the bundles and the key
    /// file; the current ones are moved aside (`*.before-restore-<time>`). Stop every server
    /// first.
    Restore {
        /// The directory `admin backup` filled.
        dir: PathBuf,
    },
    /// Send a test message through the configured relay (or the outbox) and print what it
    /// answered.
    MailTest {
        /// The recipient.
        #[arg(long)]
        to: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum InviteCommand {
    /// Invite a number.
    Add {
        /// The number: international (+44 7400 123456), or national with --region.
        number: String,
        /// Region (ISO 3166 code such as GB) of a number written without its country code.
        #[arg(long)]
        region: Option<String>,
    },
    /// Take a number off the list (an account it activated stays activated).
    Remove {
        number: String,
        #[arg(long)]
        region: Option<String>,
    },
    /// Print the list: number, when added, and the account it activated.
    List,
    /// Invite every number of a file, one per line (blank lines and # comments skipped);
    /// all or none.
    Import {
        file: PathBuf,
        #[arg(long)]
        region: Option<String>,
    },
}
