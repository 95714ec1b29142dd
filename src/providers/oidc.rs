//! Single sign-on with an OpenID Connect provider: the authorization code flow with PKCE.
//!
//! Nothing of a sign-in in progress is kept on the server, so any instance sharing the
//! secret key can finish what another began: `begin` hands the caller a cookie value
//! holding the state, nonce, PKCE verifier and where to go afterwards, sealed with an
//! HMAC under the instance key; `finish` checks it before it trusts any of it. The seal
//! signs, it does not hide: the verifier and nonce only matter together with a code
//! that is sent to this browser, which holds the cookie anyway.
//!
//! The provider's discovery document and keys are fetched on first use (a provider that
//! is down does not stop the start), kept for an hour, and the keys fetched again when
//! an ID token's signature does not verify with them (the provider rotated its keys).

use std::sync::Arc;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreClientAuthMethod, CoreIdToken, CoreIdTokenClaims, CoreProviderMetadata,
};
use openidconnect::{
    AccessTokenHash, AuthType, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, JsonWebKeySet, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, SignatureVerificationError, TokenResponse,
};
use url::Url;

use crate::config::{AllowedDomains, SsoSettings};
use crate::domain::user::normalize_email;
use crate::secret::{KeyMaterial, SecretKey};

mod error;
mod flow;

pub use error::SsoError;
use error::{exchange_error, id_token_error, unavailable};
use flow::{Flow, Sealer, safe_return_to};

/// How long a sign-in may take between `begin` and `finish`.
pub const FLOW_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// The path the provider sends the browser back to, under the public URL.
pub const CALLBACK_PATH: &str = "/auth/oidc/callback";
/// How long the discovery document and keys are trusted before they are fetched again.
const METADATA_LIFETIME: Duration = Duration::from_secs(60 * 60);
/// The longest wait for any answer of the provider.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

type Client =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

/// The name for the flow cookie, which the callback hands back to `finish`.
pub const FLOW_COOKIE: &str = "insight_oidc_flow";

/// Where to send the browser, and the cookie value to set for the callback: `HttpOnly`,
/// `SameSite=Lax` (the provider's redirect back is a cross-site navigation, which
/// `Strict` would send without it), `Secure` on https, `Max-Age` of [`FLOW_LIFETIME`].
#[derive(Debug, Clone)]
pub struct Begin {
    pub redirect: Url,
    pub flow_cookie: String,
}

/// Who signed in, as the provider vouched for him.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    /// Lowercased and trimmed ([`normalize_email`]).
    pub email: String,
    pub name: Option<String>,
    /// A path on this site, from `begin`.
    pub return_to: String,
}

/// The discovery document (with the keys) and when it was fetched.
struct Provider {
    metadata: Arc<CoreProviderMetadata>,
    fetched: Instant,
    /// Counts key fetches, so that sign-ins that found the same keys stale fetch them once.
    generation: u64,
}

/// Single sign-on with one provider, as the settings name it.
pub struct Sso {
    issuer: IssuerUrl,
    client_id: ClientId,
    client_secret: Option<ClientSecret>,
    redirect: RedirectUrl,
    allowed: AllowedDomains,
    http: reqwest::Client,
    provider: tokio::sync::Mutex<Option<Provider>>,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sso")
            .field("issuer", &self.issuer.as_str())
            .field("client_id", &self.client_id.as_str())
            .finish_non_exhaustive()
    }
}

impl Sso {
    /// From the settings and the service's public base URL: `None` when single sign-on is
    /// off, a sentence naming the variable to fix when it cannot work.
    pub fn from_settings(settings: &SsoSettings, public_url: &str) -> Result<Option<Self>, String> {
        settings.check()?;
        let (Some(issuer), Some(client_id)) = (&settings.oidc_issuer, &settings.oidc_client_id) else {
            return Ok(None);
        };
        let issuer = IssuerUrl::new(issuer.clone()).map_err(|error| format!("INSIGHT_OIDC_ISSUER: {error}"))?;
        let callback = format!("{}{CALLBACK_PATH}", public_url.trim_end_matches('/'));
        let redirect = RedirectUrl::new(callback).map_err(|error| format!("INSIGHT_PUBLIC_URL: {error}"))?;
        let http = reqwest::Client::builder()
            // The provider's answers are read as they come: a redirect is not followed to
            // an address nobody configured.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .map_err(|error| format!("cannot set up the single sign-on client: {error}"))?;
        Ok(Some(Self {
            issuer,
            client_id: ClientId::new(client_id.clone()),
            client_secret: settings
                .oidc_client_secret
                .as_ref()
                .map(|secret| ClientSecret::new(secret.expose().to_owned())),
            redirect,
            allowed: settings.oidc_allowed_domains.clone(),
            http,
            provider: tokio::sync::Mutex::default(),
        }))
    }

    /// Starts a sign-in: the provider's authorization URL (code flow, PKCE S256, random
    /// state and nonce) and the sealed cookie `finish` needs. `return_to` is kept only
    /// when it is a path on this site; anything else becomes `/`.
    pub async fn begin(&self, key: &SecretKey, return_to: &str) -> Result<Begin, SsoError> {
        let (metadata, _) = self.metadata().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (redirect, state, nonce) = self
            .client(&metadata)
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge)
            .url();
        let flow = Flow {
            state: state.into_secret(),
            nonce: nonce.secret().clone(),
            verifier: verifier.into_secret(),
            return_to: safe_return_to(return_to),
            expires: chrono::Utc::now().timestamp() + FLOW_LIFETIME.as_secs() as i64,
        };
        Ok(Begin {
            redirect,
            flow_cookie: self.sealer(key).seal(&flow),
        })
    }

    /// Finishes a sign-in from the provider's `code` and `state` and the cookie `begin`
    /// made: the code exchanged with the PKCE verifier, the ID token's signature, issuer,
    /// audience, expiry and nonce checked, and the address checked against the settings.
    pub async fn finish(
        &self,
        key: &SecretKey,
        code: &str,
        state: &str,
        flow_cookie: &str,
    ) -> Result<Identity, SsoError> {
        let flow = self.sealer(key).open(flow_cookie, chrono::Utc::now().timestamp())?;
        if !KeyMaterial::new(flow.state.as_str()).matches(state) {
            return Err(SsoError::StateMismatch);
        }
        let (metadata, generation) = self.metadata().await?;
        let client = self.client(&metadata);
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|_| SsoError::ProviderUnavailable("its discovery document names no token endpoint".into()))?
            .set_pkce_verifier(PkceCodeVerifier::new(flow.verifier))
            .request_async(&self.http)
            .await
            .map_err(|error| {
                exchange_error(
                    error,
                    self.client_secret.as_ref().map(|secret| secret.secret().as_str()),
                )
            })?;
        let id_token = response
            .id_token()
            .ok_or_else(|| SsoError::InvalidIdToken("the provider sent none".into()))?;
        let nonce = Nonce::new(flow.nonce);
        let claims = match verify(&client, id_token, &nonce, response.access_token()) {
            Err(ClaimsVerificationError::SignatureVerification(error))
                if !matches!(error, SignatureVerificationError::DisallowedAlg(_)) =>
            {
                let metadata = self.refreshed_keys(generation).await?;
                verify(&self.client(&metadata), id_token, &nonce, response.access_token())
            }
            verified => verified,
        }
        .map_err(id_token_error)?;
        // For the code flow the claims of the email and profile scopes may be served at
        // the UserInfo endpoint rather than in the ID token (OpenID Connect Core 5.4, and
        // the reference provider's default): asked there when the ID token has no address.
        let (address, verified, name) = match claims.email() {
            Some(email) => (
                Some(email.as_str().to_owned()),
                claims.email_verified(),
                claims
                    .name()
                    .and_then(|name| name.get(None))
                    .map(|name| name.as_str().to_owned()),
            ),
            None => {
                let info = self
                    .user_info(&client, response.access_token(), claims.subject())
                    .await?;
                (
                    info.email().map(|email| email.as_str().to_owned()),
                    info.email_verified(),
                    info.name()
                        .and_then(|name| name.get(None))
                        .or_else(|| claims.name().and_then(|name| name.get(None)))
                        .map(|name| name.as_str().to_owned()),
                )
            }
        };
        // Normalised as the accounts store addresses, so the identity finds its user.
        let email = address.as_deref().and_then(normalize_email);
        let email = email.ok_or(SsoError::NoEmail)?;
        if verified == Some(false) {
            return Err(SsoError::EmailNotVerified(email));
        }
        if !self.allowed.allows(&email) {
            let domain = email.rsplit_once('@').map_or("", |(_, domain)| domain).to_owned();
            return Err(SsoError::DomainNotAllowed(domain));
        }
        Ok(Identity {
            issuer: claims.issuer().as_str().to_owned(),
            subject: claims.subject().as_str().to_owned(),
            email,
            name: name.map(|name| name.trim().to_owned()).filter(|name| !name.is_empty()),
            return_to: flow.return_to,
        })
    }

    /// The claims the provider's UserInfo endpoint holds for the person the ID token named
    /// (a different `sub` there is refused, as OpenID Connect Core 5.3.2 requires).
    async fn user_info(
        &self,
        client: &Client,
        access_token: &openidconnect::AccessToken,
        subject: &openidconnect::SubjectIdentifier,
    ) -> Result<openidconnect::core::CoreUserInfoClaims, SsoError> {
        let request = client
            .user_info(access_token.clone(), Some(subject.clone()))
            .map_err(|_| SsoError::NoEmail)?;
        request.request_async(&self.http).await.map_err(|error| match error {
            openidconnect::UserInfoError::ClaimsVerification(detail) => {
                SsoError::InvalidIdToken(format!("its UserInfo answer is about someone else: {detail}"))
            }
            other => SsoError::ProviderUnavailable(format!("its UserInfo endpoint could not be read: {other}")),
        })
    }

    fn sealer<'a>(&'a self, key: &'a SecretKey) -> Sealer<'a> {
        Sealer {
            key,
            issuer: self.issuer.as_str(),
            client_id: self.client_id.as_str(),
        }
    }

    fn client(&self, metadata: &CoreProviderMetadata) -> Client {
        let client =
            CoreClient::from_provider_metadata(metadata.clone(), self.client_id.clone(), self.client_secret.clone())
                .set_redirect_uri(self.redirect.clone());
        // Basic unless the provider names only the form (no list means Basic, by the spec).
        let post_only = metadata.token_endpoint_auth_methods_supported().is_some_and(|methods| {
            methods.contains(&CoreClientAuthMethod::ClientSecretPost)
                && !methods.contains(&CoreClientAuthMethod::ClientSecretBasic)
        });
        if post_only {
            client.set_auth_type(AuthType::RequestBody)
        } else {
            client
        }
    }

    /// The discovery document with the keys, fetched when there is none or it is old.
    async fn metadata(&self) -> Result<(Arc<CoreProviderMetadata>, u64), SsoError> {
        let mut provider = self.provider.lock().await;
        if let Some(known) = provider
            .as_ref()
            .filter(|known| known.fetched.elapsed() < METADATA_LIFETIME)
        {
            return Ok((known.metadata.clone(), known.generation));
        }
        let metadata = Arc::new(
            CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
                .await
                .map_err(|error| unavailable("its discovery document", error))?,
        );
        let generation = provider.as_ref().map_or(0, |known| known.generation + 1);
        *provider = Some(Provider {
            metadata: metadata.clone(),
            fetched: Instant::now(),
            generation,
        });
        Ok((metadata, generation))
    }

    /// The provider's keys fetched again, unless another sign-in did since `generation`.
    async fn refreshed_keys(&self, generation: u64) -> Result<Arc<CoreProviderMetadata>, SsoError> {
        let mut provider = self.provider.lock().await;
        let known = provider.as_mut().expect("the document was fetched before its keys");
        if known.generation == generation {
            let keys = JsonWebKeySet::fetch_async(known.metadata.jwks_uri(), &self.http)
                .await
                .map_err(|error| unavailable("its keys", error))?;
            known.metadata = Arc::new((*known.metadata).clone().set_jwks(keys));
            known.generation += 1;
            tracing::info!(
                issuer = self.issuer.as_str(),
                "fetched the sign-in provider's keys again"
            );
        }
        Ok(known.metadata.clone())
    }
}

/// The ID token's claims once its signature, issuer, audience, expiry, nonce and (when
/// present) access token hash check out.
fn verify(
    client: &Client,
    id_token: &CoreIdToken,
    nonce: &Nonce,
    access_token: &openidconnect::AccessToken,
) -> Result<CoreIdTokenClaims, ClaimsVerificationError> {
    let verifier = client.id_token_verifier();
    let claims = id_token.claims(&verifier, nonce)?;
    if let Some(expected) = claims.access_token_hash() {
        let actual = id_token
            .signing_alg()
            .and_then(|alg| Ok((alg, id_token.signing_key(&verifier)?)))
            .and_then(|(alg, key)| {
                AccessTokenHash::from_token(access_token, alg, key)
                    .map_err(|error| SignatureVerificationError::Other(error.to_string()))
            })
            .map_err(ClaimsVerificationError::SignatureVerification)?;
        if actual != *expected {
            return Err(ClaimsVerificationError::Other(
                "its access token hash (at_hash) does not match the access token".into(),
            ));
        }
    }
    Ok(claims.clone())
}
