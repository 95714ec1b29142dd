//! Single sign-on (`insight::providers::oidc`) against a real OpenID Connect provider on
//! loopback (see `support/oidc.rs`): a sign-in that succeeds, and one test for each way a
//! sign-in must be refused. Each test plays the browser between `begin` and `finish`.
//! Where the provider's Python is missing, each says it was skipped and passes.

use insight::providers::oidc::{Identity, Sso, SsoError};
use insight::secret::SecretKey;
use serde_json::{Value, json};
use url::Url;

use crate::support::oidc::{MockProvider, Proxy, ReferenceProvider, Rewrite};

const PUBLIC_URL: &str = "http://127.0.0.1:8000";
const CLIENT_ID: &str = "insight-tests";

fn key() -> SecretKey {
    SecretKey::from_bytes(b"the test instance's secret key, 32+ bytes")
}

/// Single sign-on with the provider at `issuer` as `client_id`, letting in `domains`
/// (comma-separated; empty for any).
fn sso(issuer: &str, client_id: &str, domains: &str) -> Sso {
    sso_with_secret(issuer, client_id, domains, "a client secret the mock accepts")
}

fn sso_with_secret(issuer: &str, client_id: &str, domains: &str, secret: &str) -> Sso {
    let mut settings = insight::Settings::for_database("sqlite://unused.db").sso;
    settings.oidc_issuer = Some(issuer.to_owned());
    settings.oidc_client_id = Some(client_id.to_owned());
    settings.oidc_client_secret = Some(insight::secret::KeyMaterial::new(secret));
    if !domains.is_empty() {
        settings.oidc_allowed_domains =
            insight::config::AllowedDomains(domains.split(',').map(str::to_owned).collect());
    }
    Sso::from_settings(&settings, PUBLIC_URL)
        .expect("valid settings")
        .expect("single sign-on is on")
}

fn alice() -> Value {
    json!({"email": "Alice.Martin@Example.com", "name": "Alice Martin", "email_verified": true})
}

/// A whole sign-in of `subject` with `claims`, from `begin` to `finish`.
async fn sign_in(provider: &MockProvider, sso: &Sso, subject: &str, claims: Value) -> Result<Identity, SsoError> {
    let begun = sso.begin(&key(), "/").await.expect("begin");
    let back = provider.sign_in(&begun.redirect, subject, claims).await;
    sso.finish(&key(), &back.code, &back.state, &begun.flow_cookie).await
}

fn parameter(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

#[tokio::test]
async fn a_person_signs_in_with_the_provider_and_comes_back_where_he_was() {
    let test = "a_person_signs_in_with_the_provider_and_comes_back_where_he_was";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let sso = sso(&provider.issuer, CLIENT_ID, "");
    let begun = sso.begin(&key(), "/projects?tab=mine").await.expect("begin");

    let asked = &begun.redirect;
    assert!(
        asked
            .as_str()
            .starts_with(&format!("{}/oauth2/authorize?", provider.issuer)),
        "{asked}"
    );
    assert_eq!(parameter(asked, "response_type").as_deref(), Some("code"));
    assert_eq!(parameter(asked, "client_id").as_deref(), Some(CLIENT_ID));
    assert_eq!(
        parameter(asked, "redirect_uri").unwrap(),
        format!("{PUBLIC_URL}/auth/oidc/callback")
    );
    assert_eq!(parameter(asked, "code_challenge_method").as_deref(), Some("S256"));
    let scopes = parameter(asked, "scope").unwrap();
    assert!(
        ["openid", "email", "profile"]
            .iter()
            .all(|s| scopes.split(' ').any(|x| x == *s)),
        "{scopes}"
    );
    for random in ["state", "nonce", "code_challenge"] {
        assert!(
            parameter(asked, random).is_some_and(|value| value.len() >= 16),
            "{random} in {asked}"
        );
    }

    let back = provider.sign_in(&begun.redirect, "alice-0001", alice()).await;
    assert!(
        back.url
            .as_str()
            .starts_with(&format!("{PUBLIC_URL}/auth/oidc/callback?")),
        "{}",
        back.url
    );
    let identity = sso
        .finish(&key(), &back.code, &back.state, &begun.flow_cookie)
        .await
        .expect("finish");
    assert_eq!(
        identity,
        Identity {
            issuer: provider.issuer.clone(),
            subject: "alice-0001".into(),
            email: "alice.martin@example.com".into(),
            name: Some("Alice Martin".into()),
            return_to: "/projects?tab=mine".into(),
        }
    );

    // A code serves once: the provider refuses it again, and says why.
    let again = sso
        .finish(&key(), &back.code, &back.state, &begun.flow_cookie)
        .await
        .unwrap_err();
    assert!(
        matches!(&again, SsoError::TokenExchange(reason) if reason.contains("invalid_grant")),
        "{again:?}"
    );
    assert!(!again.is_provider_fault());

    // Somewhere else than this site is not where a sign-in comes back to.
    let begun = sso.begin(&key(), "https://evil.example/").await.expect("begin");
    let back = provider.sign_in(&begun.redirect, "alice-0001", alice()).await;
    let identity = sso
        .finish(&key(), &back.code, &back.state, &begun.flow_cookie)
        .await
        .expect("finish");
    assert_eq!(identity.return_to, "/");
}

#[tokio::test]
async fn a_state_other_than_the_flows_is_refused() {
    let test = "a_state_other_than_the_flows_is_refused";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let sso = sso(&provider.issuer, CLIENT_ID, "");
    let first = sso.begin(&key(), "/").await.expect("begin");
    let second = sso.begin(&key(), "/").await.expect("begin");
    let back = provider.sign_in(&first.redirect, "alice-0001", alice()).await;

    // The answer to one sign-in, brought with another's cookie (login CSRF).
    let refused = sso.finish(&key(), &back.code, &back.state, &second.flow_cookie).await;
    assert_eq!(refused, Err(SsoError::StateMismatch));
    let mut forged = back.state.clone();
    forged.push('x');
    let refused = sso.finish(&key(), &back.code, &forged, &first.flow_cookie).await;
    assert_eq!(refused, Err(SsoError::StateMismatch));

    // The code was not spent by the refusals.
    let identity = sso.finish(&key(), &back.code, &back.state, &first.flow_cookie).await;
    assert_eq!(identity.expect("finish").subject, "alice-0001");
}

#[tokio::test]
async fn a_tampered_or_foreign_flow_cookie_is_refused() {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    let test = "a_tampered_or_foreign_flow_cookie_is_refused";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let sso = sso(&provider.issuer, CLIENT_ID, "");
    let begun = sso.begin(&key(), "/projects").await.expect("begin");
    let back = provider.sign_in(&begun.redirect, "alice-0001", alice()).await;

    // The payload is readable: an attacker rewrites where the sign-in comes back to and
    // keeps the seal.
    let (payload, seal) = begun.flow_cookie.split_once('.').expect("payload.seal");
    let mut flow: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert_eq!(
        flow["return_to"], "/projects",
        "the test edits what it thinks it edits: {flow}"
    );
    flow["return_to"] = json!("/somewhere/else");
    let edited = format!("{}.{seal}", URL_SAFE_NO_PAD.encode(flow.to_string()));
    let refused = sso.finish(&key(), &back.code, &back.state, &edited).await;
    assert_eq!(refused, Err(SsoError::BadFlow));

    // A cookie sealed by an instance with another key.
    let other = SecretKey::from_bytes(b"another instance's secret key, 32+ bytes");
    assert_eq!(
        sso.finish(&other, &back.code, &back.state, &begun.flow_cookie).await,
        Err(SsoError::BadFlow)
    );
    assert_eq!(
        sso.finish(&key(), &back.code, &back.state, "").await,
        Err(SsoError::BadFlow)
    );

    let identity = sso.finish(&key(), &back.code, &back.state, &begun.flow_cookie).await;
    assert_eq!(
        identity.expect("the untouched cookie still works").return_to,
        "/projects"
    );
}

#[tokio::test]
async fn an_id_token_with_another_nonce_is_refused() {
    let test = "an_id_token_with_another_nonce_is_refused";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let sso = sso(&provider.issuer, CLIENT_ID, "");
    let begun = sso.begin(&key(), "/").await.expect("begin");

    // The browser swaps the nonce before it reaches the provider: state, code and PKCE
    // verifier all match the flow, only the ID token's nonce is not the flow's.
    let mut swapped = begun.redirect.clone();
    let pairs: Vec<(String, String)> = begun
        .redirect
        .query_pairs()
        .map(|(key, value)| {
            let value = if key == "nonce" {
                format!("{value}-swapped")
            } else {
                value.into_owned()
            };
            (key.into_owned(), value)
        })
        .collect();
    swapped.query_pairs_mut().clear().extend_pairs(pairs);
    assert_ne!(parameter(&swapped, "nonce"), parameter(&begun.redirect, "nonce"));

    let back = provider.sign_in(&swapped, "alice-0001", alice()).await;
    let refused = sso.finish(&key(), &back.code, &back.state, &begun.flow_cookie).await;
    assert_eq!(refused, Err(SsoError::NonceMismatch));
}

#[tokio::test]
async fn an_id_token_issued_for_another_client_is_refused() {
    let test = "an_id_token_issued_for_another_client_is_refused";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let rewrite = Rewrite {
        client: Some((CLIENT_ID.into(), "another-client".into())),
        ..Rewrite::default()
    };
    let proxy = Proxy::start(&provider, rewrite).await;
    let sso = sso(&proxy.issuer, CLIENT_ID, "");
    let begun = sso.begin(&key(), "/").await.expect("begin");
    let back = provider.sign_in(&begun.redirect, "alice-0001", alice()).await;
    let refused = sso
        .finish(&key(), &back.code, &back.state, &begun.flow_cookie)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, SsoError::InvalidIdToken(reason) if reason.contains("another client") && reason.contains("another-client")),
        "{refused:?}"
    );
    assert!(!refused.is_provider_fault());
}

#[tokio::test]
async fn an_expired_id_token_is_refused() {
    let test = "an_expired_id_token_is_refused";
    // ID tokens that expired a minute before they were issued (see Rewrite).
    let Some(provider) = MockProvider::start(test, &["--token-max-age=-60"]).await else {
        return;
    };
    let rewrite = Rewrite {
        negative_lifetime_as_zero: true,
        ..Rewrite::default()
    };
    let proxy = Proxy::start(&provider, rewrite).await;
    let sso = sso(&proxy.issuer, CLIENT_ID, "");
    let refused = sign_in(&provider, &sso, "alice-0001", alice()).await.unwrap_err();
    assert!(
        matches!(&refused, SsoError::InvalidIdToken(reason) if reason.contains("expired")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn only_verified_addresses_of_the_allowed_domains_sign_in() {
    let test = "only_verified_addresses_of_the_allowed_domains_sign_in";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let sso = sso(&provider.issuer, CLIENT_ID, "example.com,example.net");

    let outsider = json!({"email": "bob@example.org", "name": "Bob", "email_verified": true});
    let refused = sign_in(&provider, &sso, "bob-0002", outsider).await;
    assert_eq!(refused, Err(SsoError::DomainNotAllowed("example.org".into())));
    let lookalike = json!({"email": "eve@mail.example.com", "email_verified": true});
    let refused = sign_in(&provider, &sso, "eve-0003", lookalike).await;
    assert_eq!(refused, Err(SsoError::DomainNotAllowed("mail.example.com".into())));

    let unverified = json!({"email": "carol@example.net", "email_verified": false});
    let refused = sign_in(&provider, &sso, "carol-0004", unverified).await;
    assert_eq!(refused, Err(SsoError::EmailNotVerified("carol@example.net".into())));
    assert_eq!(
        sign_in(&provider, &sso, "dan-0005", json!({})).await,
        Err(SsoError::NoEmail)
    );

    // Not saying whether it is verified is not saying it is not; no name is no name.
    let identity = sign_in(&provider, &sso, "carol-0004", json!({"email": "Carol@EXAMPLE.net"})).await;
    let identity = identity.expect("an allowed domain signs in");
    assert_eq!((identity.email.as_str(), identity.name), ("carol@example.net", None));
    let identity = sign_in(&provider, &sso, "alice-0001", alice())
        .await
        .expect("an allowed domain");
    assert_eq!(identity.email, "alice.martin@example.com");
}

#[tokio::test]
async fn keys_the_provider_rotated_are_fetched_again() {
    let test = "keys_the_provider_rotated_are_fetched_again";
    let Some(provider) = MockProvider::start(test, &[]).await else {
        return;
    };
    let sso = sso(&provider.issuer, CLIENT_ID, "");
    sign_in(&provider, &sso, "alice-0001", alice())
        .await
        .expect("with the first keys");
    // Same issuer, same port, a new signing key; the document and keys are cached.
    let provider = provider.restart().await;
    let identity = sign_in(&provider, &sso, "alice-0001", alice()).await;
    assert_eq!(identity.expect("with the new keys").subject, "alice-0001");
}

#[tokio::test]
async fn a_provider_that_does_not_answer_is_the_providers_fault() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let sso = sso(&format!("http://{closed}"), CLIENT_ID, "");
    let error = sso.begin(&key(), "/").await.unwrap_err();
    assert!(matches!(error, SsoError::ProviderUnavailable(_)), "{error:?}");
    assert!(error.is_provider_fault());
    assert!(error.to_string().contains("discovery document"), "{error}");
}

/// Single sign-on with the reference provider, and a whole sign-in of `login` at it.
async fn at_the_reference(provider: &ReferenceProvider, sso: &Sso, login: &str) -> Result<Identity, SsoError> {
    let begun = sso.begin(&key(), "/").await.expect("begin");
    let back = provider.sign_in(&begun.redirect, login).await;
    sso.finish(&key(), &back.code, &back.state, &begun.flow_cookie).await
}

fn reference_sso(provider: &ReferenceProvider, domains: &str) -> Sso {
    sso_with_secret(&provider.issuer, CLIENT_ID, domains, ReferenceProvider::CLIENT_SECRET)
}

#[tokio::test]
async fn the_certified_reference_provider_signs_people_in_with_the_claims_of_its_userinfo_endpoint() {
    let test = "the_certified_reference_provider_signs_people_in_with_the_claims_of_its_userinfo_endpoint";
    let redirect = format!("{PUBLIC_URL}/auth/oidc/callback");
    let Some(provider) = ReferenceProvider::start(test, CLIENT_ID, &redirect).await else {
        return;
    };
    let sso = reference_sso(&provider, "");
    // Its ID token carries no address: only its UserInfo endpoint says who this is.
    let ann = at_the_reference(&provider, &sso, "ann")
        .await
        .unwrap_or_else(|error| panic!("{error}\n{}", provider.log()));
    assert_eq!(ann.email, "ann@example.org");
    assert_eq!(ann.name.as_deref(), Some("ann Example"));
    assert_eq!(ann.subject, "ann");
    assert_eq!(ann.issuer, provider.issuer);
    // The rule on verified addresses holds for claims from UserInfo too.
    match at_the_reference(&provider, &sso, "unverified-bob").await {
        Err(SsoError::EmailNotVerified(email)) => assert_eq!(email, "bob@example.org"),
        other => panic!("an unverified address signed in: {other:?}"),
    }
    assert!(matches!(
        at_the_reference(&provider, &sso, "anonymous-carl").await,
        Err(SsoError::NoEmail)
    ));
    let only_others = reference_sso(&provider, "example.com");
    assert!(matches!(
        at_the_reference(&provider, &only_others, "dana").await,
        Err(SsoError::DomainNotAllowed(domain)) if domain == "example.org"
    ));
}

#[tokio::test]
async fn a_reference_provider_that_went_down_mid_sign_in_is_the_providers_fault() {
    let test = "a_reference_provider_that_went_down_mid_sign_in_is_the_providers_fault";
    let redirect = format!("{PUBLIC_URL}/auth/oidc/callback");
    let Some(mut provider) = ReferenceProvider::start(test, CLIENT_ID, &redirect).await else {
        return;
    };
    let sso = reference_sso(&provider, "");
    let begun = sso.begin(&key(), "/").await.expect("begin");
    let back = provider.sign_in(&begun.redirect, "erin").await;
    provider.stop();
    let error = sso
        .finish(&key(), &back.code, &back.state, &begun.flow_cookie)
        .await
        .expect_err("no provider to exchange the code with");
    assert!(error.is_provider_fault(), "{error}");
}
