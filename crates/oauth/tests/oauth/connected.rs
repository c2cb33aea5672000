//! Connected agents against the in-memory world with a fixed clock: an approved and redeemed
//! authorization is listed once per (client, project) with its scopes and last token issue;
//! pending, denied, unredeemed and expired ones are not; disconnecting revokes every grant
//! behind the entry (its refresh tokens stop working) and only the account's own.

use crate::common;

use common::Now;
use quire_oauth::grant::REFRESH_IDLE_LIFETIME;
use quire_oauth::{DisconnectError, TokenError};
use quire_testkit::World;
use time::Duration;

#[tokio::test]
async fn a_redeemed_authorization_is_listed_with_its_last_token_and_ended_whole() {
    let f = flow_with_bob().await;
    let agents = &f.w.services.oauth_agents;
    let ann = f.w.account("ann");
    assert_eq!(agents.list(ann.account.id).await.unwrap(), vec![]);

    // Approved but not redeemed: not connected yet.
    let code = f.code().await;
    assert_eq!(agents.list(ann.account.id).await.unwrap(), vec![]);
    let connected_at = f.w.clock_now();
    let first = f.exchange(&code).await.unwrap();
    // A second authorization of the same client, later: one entry, two grants.
    f.w.clock.advance(Duration::minutes(5));
    let second = f.exchange(&f.code().await).await.unwrap();
    f.w.clock.advance(Duration::minutes(20));
    let refreshed_at = f.w.clock_now();
    f.refresh(second.refresh_token.expose()).await.unwrap();

    let listed = agents.list(ann.account.id).await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let agent = &listed[0];
    assert_eq!(agent.client_id, f.client.id);
    assert_eq!(agent.client_name, "Notes");
    assert_eq!(agent.project.id, ann.project.id);
    assert_eq!(agent.scopes, ["page", "link"]);
    assert_eq!(agent.connected_at, connected_at);
    assert_eq!(agent.last_used_at, refreshed_at);
    assert_eq!(agent.grant_ids.len(), 2);

    // Bob cannot end ann's agent, nor can anyone end it in another project.
    let bob = f.w.account("bob");
    let client = f.client.id.as_str();
    assert_eq!(
        agents
            .disconnect(bob.account.id, client, ann.project.id)
            .await
            .unwrap_err(),
        DisconnectError::NotConnected
    );
    assert_eq!(
        agents
            .disconnect(ann.account.id, client, bob.project.id)
            .await
            .unwrap_err(),
        DisconnectError::NotConnected
    );
    assert_eq!(agents.list(ann.account.id).await.unwrap().len(), 1);

    let ended = agents
        .disconnect(ann.account.id, client, ann.project.id)
        .await
        .unwrap();
    assert_eq!(ended.grant_ids.len(), 2);
    assert_eq!(agents.list(ann.account.id).await.unwrap(), vec![]);
    for refresh in [&first.refresh_token, &second.refresh_token] {
        assert_eq!(
            f.refresh(refresh.expose()).await.unwrap_err(),
            TokenError::InvalidGrant("this authorization was revoked")
        );
    }
    assert_eq!(
        agents
            .disconnect(ann.account.id, client, ann.project.id)
            .await
            .unwrap_err(),
        DisconnectError::NotConnected
    );
}

#[tokio::test]
async fn an_authorization_whose_refresh_token_expired_is_no_longer_connected() {
    let f = flow_with_bob().await;
    let ann = f.w.account("ann").account.id;
    f.exchange(&f.code().await).await.unwrap();
    f.w.clock
        .advance(REFRESH_IDLE_LIFETIME - Duration::seconds(1));
    assert_eq!(f.w.services.oauth_agents.list(ann).await.unwrap().len(), 1);
    f.w.clock.advance(Duration::seconds(1));
    assert_eq!(f.w.services.oauth_agents.list(ann).await.unwrap(), vec![]);
}

async fn flow_with_bob() -> common::Flow {
    common::flow_in(World::builder().accounts(&["ann", "bob"]).build().await).await
}
