//! Single sign-on with an OpenID Connect provider (Keycloak, Google, Entra ID, Okta,
//! Authentik...): whom to ask, as which client, and whom to let in.

use clap::Args;

use super::check::checked;

/// People can sign in with an OpenID Connect provider (Keycloak, Authentik, Google, Entra
/// ID, Okta...) through `GET /auth/oidc/login`: the authorization code flow with PKCE, the
/// ID token's signature checked with the provider's published keys, and its issuer,
/// audience, expiry and nonce checked too. Register this service at the provider as a
/// confidential (or public) web client whose redirect URI is
/// `INSIGHT_PUBLIC_URL/auth/oidc/callback`, with the scopes `openid email profile`. The
/// address and name come from the ID token, or from the provider's UserInfo endpoint when
/// the ID token does not carry them (as OpenID Certified providers such as oidc-provider
/// do by default); an address the provider calls unverified is refused either way.
///
/// The sign-in's state, nonce and PKCE verifier travel in a short-lived (10 minutes)
/// cookie sealed with `INSIGHT_SECRET_KEY`, so any instance sharing the key can finish a
/// sign-in another began.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Single sign-on", verbatim_doc_comment)]
pub struct SsoSettings {
    /// The OpenID Connect provider's issuer URL, exactly as the `issuer` of its
    /// `/.well-known/openid-configuration` states it (e.g. https://idp.example.com/realms/acme;
    /// a trailing `/` matters); unset, single sign-on is off.
    ///
    /// Set, the start needs `INSIGHT_OIDC_CLIENT_ID` too, else it stops naming it. The
    /// provider is asked for its discovery document and keys at the first sign-in, not at
    /// the start, so a provider that is down does not keep the service from starting
    /// (sign-ins get 503 until it is back). Use `https://`; `http://` is accepted for a
    /// provider on the same host or network.
    #[arg(long, env = "INSIGHT_OIDC_ISSUER", value_parser = checked(parse_oidc_issuer))]
    pub oidc_issuer: Option<String>,

    /// The client ID this service is registered under at the provider; the ID token's
    /// audience must name it.
    #[arg(long, env = "INSIGHT_OIDC_CLIENT_ID", value_parser = checked(parse_oidc_client_id))]
    pub oidc_client_id: Option<String>,

    /// The client secret, sent as HTTP Basic or in the form, whichever the provider
    /// advertises (`token_endpoint_auth_methods_supported`); unset for a public client
    /// (PKCE only). Never logged.
    #[arg(long, env = "INSIGHT_OIDC_CLIENT_SECRET", hide_env_values = true, value_parser = checked(parse_oidc_client_secret))]
    pub oidc_client_secret: Option<crate::secret::KeyMaterial>,

    /// Email domains allowed to sign in, comma-separated (e.g. example.com,example.org);
    /// empty, any.
    ///
    /// A sign-in whose (verified) address is in another domain is refused. Matched exactly:
    /// `example.com` does not let in `sub.example.com`. An address the provider says is not
    /// verified (`email_verified: false`) is always refused.
    #[arg(long, env = "INSIGHT_OIDC_ALLOWED_DOMAINS", default_value = "", value_parser = checked(parse_allowed_domains))]
    pub oidc_allowed_domains: AllowedDomains,

    /// A workspace (its UUID) every new single sign-on user joins, besides his personal one.
    #[arg(long, env = "INSIGHT_OIDC_WORKSPACE", value_parser = checked(parse_oidc_workspace))]
    pub oidc_workspace: Option<uuid::Uuid>,

    /// The role new single sign-on users get in INSIGHT_OIDC_WORKSPACE: owner, admin,
    /// researcher or viewer.
    #[arg(long, env = "INSIGHT_OIDC_ROLE", default_value = "viewer", value_parser = checked(parse_oidc_role))]
    pub oidc_role: SsoRole,
}

/// Lowercased email domains; empty allows every domain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedDomains(pub Vec<String>);

impl AllowedDomains {
    /// Whether an address's domain (after its last `@`) is allowed, ignoring case.
    pub fn allows(&self, email: &str) -> bool {
        let domain = email.rsplit_once('@').map_or("", |(_, domain)| domain);
        self.0.is_empty() || self.0.iter().any(|allowed| allowed.eq_ignore_ascii_case(domain))
    }
}

/// A workspace role, as INSIGHT_OIDC_ROLE names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SsoRole {
    Owner,
    Admin,
    Researcher,
    Viewer,
}

impl SsoRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Admin => "admin",
            Self::Researcher => "researcher",
            Self::Viewer => "viewer",
        }
    }
}

impl SsoSettings {
    /// Whether single sign-on is on (an issuer is set).
    pub fn enabled(&self) -> bool {
        self.oidc_issuer.is_some()
    }

    /// Settings that cannot work together, told in a sentence naming the variables. clap
    /// checks each value alone; this is the check across them, made when the services are
    /// built, so a start with an issuer but no client stops there.
    pub fn check(&self) -> Result<(), String> {
        if self.oidc_issuer.is_some() && self.oidc_client_id.is_none() {
            return Err(
                "single sign-on needs INSIGHT_OIDC_CLIENT_ID (--oidc-client-id) when INSIGHT_OIDC_ISSUER is set".into(),
            );
        }
        Ok(())
    }
}

fn parse_oidc_issuer(value: &str) -> Result<String, String> {
    let value = value.trim();
    match url::Url::parse(value) {
        Ok(url)
            if matches!(url.scheme(), "http" | "https")
                && url.host().is_some()
                && url.query().is_none()
                && url.fragment().is_none() =>
        {
            // Kept as written: the provider's `iss` must match it character for character.
            Ok(value.to_owned())
        }
        _ => Err("must be an https:// (or http://) URL without query or fragment".into()),
    }
}

fn parse_oidc_client_id(value: &str) -> Result<String, String> {
    let value = value.trim();
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    Ok(value.to_owned())
}

fn parse_oidc_client_secret(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    Ok(crate::secret::KeyMaterial::new(value))
}

fn parse_allowed_domains(value: &str) -> Result<AllowedDomains, String> {
    let domains = value
        .split(',')
        .map(|part| part.trim().trim_start_matches('@').to_ascii_lowercase())
        .filter(|part| !part.is_empty())
        .map(|domain| {
            let valid = domain.contains('.')
                && domain
                    .split('.')
                    .all(|label| !label.is_empty() && label.chars().all(|c| c.is_alphanumeric() || c == '-'));
            if valid {
                Ok(domain)
            } else {
                Err("must be comma-separated email domains such as example.com,example.org".to_owned())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AllowedDomains(domains))
}

fn parse_oidc_workspace(value: &str) -> Result<uuid::Uuid, String> {
    value.trim().parse().map_err(|_| "must be a workspace's UUID".into())
}

fn parse_oidc_role(value: &str) -> Result<SsoRole, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "owner" => Ok(SsoRole::Owner),
        "admin" => Ok(SsoRole::Admin),
        "researcher" => Ok(SsoRole::Researcher),
        "viewer" => Ok(SsoRole::Viewer),
        _ => Err("must be owner, admin, researcher or viewer".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_with_a_sentence_saying_what_they_must_be() {
        assert_eq!(
            parse_oidc_issuer(" https://idp.example.com/realms/a ").unwrap(),
            "https://idp.example.com/realms/a"
        );
        assert_eq!(
            parse_oidc_issuer("https://tenant.example.com/").unwrap(),
            "https://tenant.example.com/"
        );
        for bad in [
            "idp.example.com",
            "ftp://idp.example.com",
            "https://idp.example.com/?a=1",
            "",
        ] {
            assert!(parse_oidc_issuer(bad).unwrap_err().starts_with("must be "), "{bad}");
        }
        let domains = parse_allowed_domains(" Example.com, @example.org ,").unwrap();
        assert_eq!(domains.0, ["example.com", "example.org"]);
        assert!(domains.allows("a@EXAMPLE.COM") && !domains.allows("a@example.com.evil.net"));
        assert!(parse_allowed_domains("").unwrap().allows("anyone@anywhere.net"));
        assert!(parse_allowed_domains("a@b.com").unwrap_err().contains("email domains"));
        assert_eq!(parse_oidc_role("Researcher").unwrap(), SsoRole::Researcher);
        assert!(parse_oidc_role("guest").unwrap_err().contains("viewer"));
        assert!(parse_oidc_workspace("nope").unwrap_err().contains("UUID"));
    }

    #[test]
    fn an_issuer_needs_a_client() {
        let mut settings = crate::Settings::for_database("sqlite://unused.db").sso;
        assert!(settings.check().is_ok(), "off");
        settings.oidc_issuer = Some("https://idp.example.com".into());
        let error = settings.check().unwrap_err();
        assert!(
            error.contains("INSIGHT_OIDC_CLIENT_ID") && error.contains("INSIGHT_OIDC_ISSUER"),
            "{error}"
        );
        settings.oidc_client_id = Some("insight".into());
        assert!(settings.check().is_ok(), "on");
    }
}
