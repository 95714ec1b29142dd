//! The `insight` command: run the service, manage users and tokens, print the API document.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use insight::app::accounts::password;
use insight::config::{LogFormat, Settings};
use insight::domain::user::{TokenScope, normalize_email, parse_lifetime};
use insight::{Server, Store};
use tracing_subscriber::EnvFilter;
use uuid::Uuid;

#[derive(Parser)]
#[command(name = "insight", version, about = "Self-hostable customer research service")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service: API, API document at /docs, background work.
    Serve(Box<Settings>),
    /// Manage users.
    Users {
        #[command(subcommand)]
        command: UsersCommand,
        #[command(flatten)]
        db: DatabaseArg,
    },
    /// Manage API tokens.
    Tokens {
        #[command(subcommand)]
        command: TokensCommand,
        #[command(flatten)]
        db: DatabaseArg,
    },
    /// Print the OpenAPI document.
    Openapi,
}

#[derive(clap::Args)]
struct DatabaseArg {
    /// Database URL.
    #[arg(
        long,
        global = true,
        env = "INSIGHT_DATABASE_URL",
        default_value = "sqlite://insight.db",
        value_parser = insight::config::database_url()
    )]
    database_url: String,
}

#[derive(Subcommand)]
enum UsersCommand {
    /// Add a user by email address (with his personal workspace).
    Add { email: String },
    /// Set a user's password, read from standard input (one line); ends his sessions.
    SetPassword { email: String },
    /// Print a one-time link for a user to set his password.
    ResetLink {
        email: String,
        /// Lifetime such as 24h or 7d.
        #[arg(long, default_value = "24h")]
        expires_in: String,
        /// The address people reach the service at.
        #[arg(long, env = "INSIGHT_PUBLIC_URL", default_value = "http://127.0.0.1:8000")]
        public_url: String,
    },
}

#[derive(Subcommand)]
enum TokensCommand {
    /// Issue a new token for a user; prints the token alone on stdout, once.
    Issue {
        email: String,
        /// A name to recognise the token by.
        #[arg(long, default_value = "cli")]
        name: String,
        /// Lifetime such as 30d, 12h, 45m; no expiry when left out.
        #[arg(long)]
        expires_in: Option<String>,
        /// What the token may do: `write` (everything its user may) or `read` (no changes).
        #[arg(long, default_value = "write", value_parser = parse_scope)]
        scope: TokenScope,
    },
    /// List a user's tokens (never the tokens themselves).
    List { email: String },
    /// Revoke a token by its id.
    Revoke { id: Uuid },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let log_format = match &cli.command {
        Command::Serve(settings) => settings.server.log_format,
        _ => LogFormat::Text,
    };
    init_logging(log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

async fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve(settings) => serve(*settings).await,
        Command::Openapi => {
            println!("{}", insight::document().to_pretty_json()?);
            Ok(())
        }
        Command::Users { command, db } => {
            let store = Store::connect(&db.database_url, 2).await?;
            let result = users(&store, command).await;
            store.close().await;
            result
        }
        Command::Tokens { command, db } => {
            let store = Store::connect(&db.database_url, 2).await?;
            let result = tokens(&store, command).await;
            store.close().await;
            result
        }
    }
}

async fn tokens(store: &Store, command: TokensCommand) -> anyhow::Result<()> {
    match command {
        TokensCommand::Issue {
            email,
            name,
            expires_in,
            scope,
        } => {
            let user = find_user(store, &email).await?;
            let expires_at = match expires_in {
                Some(lifetime) => Some(
                    insight::domain::now()
                        + parse_lifetime(&lifetime).with_context(|| {
                            format!("--expires-in {lifetime:?}: give a number and d, h, m or s, e.g. 30d")
                        })?,
                ),
                None => None,
            };
            let (_, token) = store.issue_token(user.id, &name, scope, expires_at).await?;
            println!("{token}");
        }
        TokensCommand::List { email } => {
            let user = find_user(store, &email).await?;
            println!(
                "{:<36}  {:<20}  {:<25}  {:<25}  STATE",
                "ID", "NAME", "CREATED", "EXPIRES"
            );
            let now = insight::domain::now();
            for token in store.list_tokens(user.id).await? {
                let state = match (token.revoked_at, token.expires_at) {
                    (Some(_), _) => "revoked",
                    (None, Some(expires)) if expires <= now => "expired",
                    _ => "active",
                };
                let expires = token.expires_at.map_or_else(|| "never".to_owned(), |t| t.to_rfc3339());
                println!(
                    "{:<36}  {:<20}  {:<25}  {:<25}  {state}",
                    token.id,
                    token.name,
                    token.created_at.to_rfc3339(),
                    expires
                );
            }
        }
        TokensCommand::Revoke { id } => {
            if !store.revoke_token(id, None).await? {
                bail!("no active token with id {id}");
            }
            eprintln!("token {id} revoked");
        }
    }
    Ok(())
}

async fn users(store: &Store, command: UsersCommand) -> anyhow::Result<()> {
    match command {
        UsersCommand::Add { email } => {
            let email = normalize_email(&email).with_context(|| format!("{email:?} is not an email address"))?;
            match store.add_user(&email).await? {
                Some(user) => println!("{}", user.id),
                None => bail!("a user with the address {email} exists already"),
            }
        }
        UsersCommand::SetPassword { email } => {
            let user = find_user(store, &email).await?;
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .context("reading the password from standard input")?;
            let password = line.trim_end_matches(['\n', '\r']).to_owned();
            password::check_new_password(&password).map_err(anyhow::Error::msg)?;
            let phc = password::hash(password).await?;
            store.set_password_hash(user.id, &phc, None).await?;
            eprintln!("password set for {}; his sessions were ended", user.email);
        }
        UsersCommand::ResetLink {
            email,
            expires_in,
            public_url,
        } => {
            let user = find_user(store, &email).await?;
            let lifetime = parse_lifetime(&expires_in)
                .with_context(|| format!("--expires-in {expires_in:?}: give a number and d, h, m or s, e.g. 24h"))?;
            let token = store.issue_password_link(user.id, lifetime).await?;
            println!("{}", insight::app::accounts::password_link_url(&public_url, &token));
        }
    }
    Ok(())
}

fn parse_scope(value: &str) -> Result<TokenScope, String> {
    TokenScope::parse(value).ok_or_else(|| format!("--scope must be read or write, not {value:?}"))
}

async fn find_user(store: &Store, email: &str) -> anyhow::Result<insight::domain::user::User> {
    let normalized = normalize_email(email).with_context(|| format!("{email:?} is not an email address"))?;
    store
        .user_by_email(&normalized)
        .await?
        .with_context(|| format!("no user {normalized}; add one with `insight users add {normalized}`"))
}

/// How long the first run's link to set the admin's password stays valid.
const FIRST_LINK_DAYS: i64 = 7;

async fn serve(settings: Settings) -> anyhow::Result<()> {
    // Settings that depend on each other are checked before anything is touched.
    settings.model.ai_kind().map_err(anyhow::Error::msg)?;
    let store = Store::connect(&settings.storage.database_url, settings.storage.db_max_connections).await?;
    if let Some((user, token)) = store.ensure_first_user().await? {
        tracing::info!(
            email = %user.email,
            "empty database: created the first user; its token, then a one-time link to set its password, are printed on stdout once"
        );
        let link = store
            .issue_password_link(user.id, chrono::Duration::days(FIRST_LINK_DAYS))
            .await?;
        println!("{token}");
        println!(
            "{}",
            insight::app::accounts::password_link_url(&settings.server.public_url, &link)
        );
    }
    let backend = store.backend();
    let server = Server::start(settings, store).await?;
    tracing::info!(backend = ?backend, "Insight listening on http://{}", server.addr);
    server.run_until_signal().await
}
