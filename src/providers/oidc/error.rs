//! Why a sign-in was refused, told from what openidconnect reports: a sentence for the
//! person signing in or the operator, without the client secret, a code, a token or a
//! provider's page.

use openidconnect::core::CoreErrorResponseType;
use openidconnect::{
    ClaimsVerificationError, DiscoveryError, HttpClientError, RequestTokenError, StandardErrorResponse,
};

/// Why a sign-in was refused; each message is for the person signing in or the operator,
/// and none holds the client secret, a code or a token.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SsoError {
    #[error("this sign-in was not started here or its cookie was altered; please sign in again")]
    BadFlow,
    #[error("this sign-in took more than 10 minutes; please sign in again")]
    FlowExpired,
    #[error("the provider's answer does not belong to the sign-in this browser started; please sign in again")]
    StateMismatch,
    #[error("the provider would not complete the sign-in: {0}")]
    TokenExchange(String),
    #[error("the provider's ID token was refused: {0}")]
    InvalidIdToken(String),
    #[error("the provider's ID token was issued for another sign-in (its nonce differs); please sign in again")]
    NonceMismatch,
    #[error(
        "the provider did not tell this account's email address (or not a valid one); it must allow the `email` scope"
    )]
    NoEmail,
    #[error("the provider says the address {0} is not verified; verify it there, then sign in again")]
    EmailNotVerified(String),
    #[error("addresses at {0} may not sign in here")]
    DomainNotAllowed(String),
    #[error("the sign-in provider is unavailable: {0}")]
    ProviderUnavailable(String),
}

impl SsoError {
    /// Whether the provider (or this service's registration there) failed rather than the
    /// sign-in: a 503, where the others refuse the sign-in.
    pub fn is_provider_fault(&self) -> bool {
        matches!(self, Self::ProviderUnavailable(_))
    }
}

/// Why the code exchange failed, with the client `secret` kept out.
pub(super) fn exchange_error(
    error: RequestTokenError<HttpClientError<reqwest::Error>, StandardErrorResponse<CoreErrorResponseType>>,
    secret: Option<&str>,
) -> SsoError {
    match error {
        RequestTokenError::ServerResponse(answer) => {
            let mut reason = answer.error().to_string();
            if let Some(description) = answer.error_description() {
                reason = format!("{reason} ({description})");
            }
            let reason = crate::providers::client::redact(&reason, secret);
            match answer.error() {
                CoreErrorResponseType::InvalidClient | CoreErrorResponseType::UnauthorizedClient => {
                    SsoError::ProviderUnavailable(format!(
                        "it refuses this service's client ({reason}); check INSIGHT_OIDC_CLIENT_ID and \
                         INSIGHT_OIDC_CLIENT_SECRET"
                    ))
                }
                _ => SsoError::TokenExchange(reason),
            }
        }
        // The body may hold a token: only where it did not parse is told.
        RequestTokenError::Parse(error, _) => {
            SsoError::ProviderUnavailable(format!("its token answer could not be read (at `{}`)", error.path()))
        }
        RequestTokenError::Request(error) => SsoError::ProviderUnavailable(causes(&error)),
        RequestTokenError::Other(reason) => {
            SsoError::ProviderUnavailable(crate::providers::client::redact(&reason, secret))
        }
    }
}

pub(super) fn id_token_error(error: ClaimsVerificationError) -> SsoError {
    match error {
        ClaimsVerificationError::InvalidNonce(_) => SsoError::NonceMismatch,
        ClaimsVerificationError::Expired(detail) => SsoError::InvalidIdToken(format!("it has expired: {detail}")),
        ClaimsVerificationError::InvalidAudience(detail) => {
            SsoError::InvalidIdToken(format!("it was issued for another client: {detail}"))
        }
        ClaimsVerificationError::InvalidIssuer(detail) => {
            SsoError::InvalidIdToken(format!("another issuer made it: {detail}"))
        }
        ClaimsVerificationError::SignatureVerification(detail) => SsoError::InvalidIdToken(format!(
            "its signature does not verify with the provider's keys: {detail}"
        )),
        other => SsoError::InvalidIdToken(other.to_string()),
    }
}

pub(super) fn unavailable(what: &str, error: DiscoveryError<HttpClientError<reqwest::Error>>) -> SsoError {
    let reason = match error {
        DiscoveryError::Request(error) => causes(&error),
        // The body is the provider's page, not ours to repeat.
        DiscoveryError::Response(status, _, _) => format!("it answered HTTP {status}"),
        other => causes(&other),
    };
    SsoError::ProviderUnavailable(format!("{what} could not be had: {reason}"))
}

/// An error told by itself and its causes, each once (a reqwest error's URL, which names
/// only the provider's public endpoints, is dropped by `provider::error_chain`).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    if let Some(HttpClientError::Reqwest(error)) = error.downcast_ref::<HttpClientError<reqwest::Error>>() {
        return crate::providers::client::error_chain(error).unwrap_or_else(|| "the request failed".into());
    }
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(kind: CoreErrorResponseType, description: &str) -> SsoError {
        let answer = StandardErrorResponse::new(kind, Some(description.into()), None);
        exchange_error(RequestTokenError::ServerResponse(answer), Some("the-client-secret"))
    }

    #[test]
    fn a_refused_exchange_tells_whose_fault_it_is_and_never_the_secret() {
        let spent = refusal(CoreErrorResponseType::InvalidGrant, "code already used");
        assert_eq!(
            spent,
            SsoError::TokenExchange("invalid_grant (code already used)".into())
        );
        assert!(!spent.is_provider_fault());

        let misconfigured = refusal(
            CoreErrorResponseType::InvalidClient,
            "secret the-client-secret is wrong",
        );
        assert!(misconfigured.is_provider_fault(), "{misconfigured:?}");
        let told = misconfigured.to_string();
        assert!(!told.contains("the-client-secret"), "{told}");
        assert!(
            told.contains("INSIGHT_OIDC_CLIENT_SECRET") && told.contains("[redacted]"),
            "{told}"
        );
    }
}
