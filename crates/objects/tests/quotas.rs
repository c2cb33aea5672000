//! The account's quota of object bytes on the in-memory fakes, where the HTTP tests cannot
//! reach: uploads that race for the last room (two new objects, a replacement against a new
//! object) never both stay, and the loser leaves nothing, or the bytes it replaced; an upload
//! URL is refused when there is no room, and its upload past what is left.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use bytes::Bytes;
use quire_objects::{NewObject, ObjectError, ObjectService, ObjectView};
use quire_testkit::World;

async fn world() -> World {
    World::builder()
        .accounts(&["ann"])
        .settings(|s| s.objects.max_account_bytes = 100)
        .build()
        .await
}

fn objects(w: &World) -> &ObjectService {
    &w.services.objects
}

fn named(title: &str) -> NewObject {
    NewObject {
        title: Some(title.into()),
        ..NewObject::default()
    }
}

async fn stored(w: &World, title: &str, size: usize) -> ObjectView {
    let mut upload = objects(w)
        .begin(&w.master("ann"), named(title), None)
        .await
        .unwrap();
    upload.write(Bytes::from(vec![1; size])).await.unwrap();
    upload.finish().await.unwrap()
}

fn over(used: u64) -> ObjectError {
    ObjectError::StorageQuotaExceeded { used, limit: 100 }
}

#[tokio::test]
async fn two_new_objects_racing_for_the_last_room_are_never_both_kept() {
    let w = world().await;
    let ann = w.master("ann");
    let mut first = objects(&w).begin(&ann, named("First"), None).await.unwrap();
    let mut second = objects(&w)
        .begin(&ann, named("Second"), None)
        .await
        .unwrap();
    // Each fits in what was free when it began.
    first.write(Bytes::from(vec![1; 60])).await.unwrap();
    second.write(Bytes::from(vec![2; 60])).await.unwrap();
    let kept = first.finish().await.unwrap();
    assert_eq!(second.finish().await.unwrap_err(), over(60));

    let state = w.store.snapshot();
    assert_eq!(state.objects.len(), 1, "{:?}", state.objects);
    assert_eq!(state.objects[0].0.id, kept.object.id);
    let links = state.links.iter().filter(|l| l.object().is_some()).count();
    assert_eq!(links, 1, "the loser's link went too");
    assert_eq!(w.object_bytes.stored().len(), 1, "and its bytes");
    let usage = objects(&w).usage(&ann, None).await.unwrap();
    assert_eq!((usage.used, usage.limit), (60, Some(100)));
}

#[tokio::test]
async fn a_replacement_that_loses_the_race_keeps_the_bytes_it_had() {
    let w = world().await;
    let ann = w.master("ann");
    let deck = stored(&w, "Deck", 50).await;
    let mut replacing = objects(&w)
        .begin_replace(&ann, deck.object.id, None, None, None)
        .await
        .unwrap();
    // The old bytes leave the quota as the new come: 70 fit in the 100 then free.
    replacing.write(Bytes::from(vec![3; 70])).await.unwrap();
    stored(&w, "Notes", 40).await;
    assert_eq!(replacing.finish().await.unwrap_err(), over(40));

    let kept = objects(&w).get(&ann, deck.object.id).await.unwrap();
    assert_eq!(kept.object.size_bytes, 50);
    assert_eq!(kept.object.blob, deck.object.blob);
    assert_eq!(w.object_bytes.stored().len(), 2, "the new bytes went");
    // Within the room, a replacement that grows the object is taken.
    let mut growing = objects(&w)
        .begin_replace(&ann, deck.object.id, None, None, Some(60))
        .await
        .unwrap();
    growing.write(Bytes::from(vec![4; 60])).await.unwrap();
    assert_eq!(growing.finish().await.unwrap().object.size_bytes, 60);
    let too_big = objects(&w)
        .begin_replace(&ann, deck.object.id, None, None, Some(61))
        .await;
    assert_eq!(too_big.unwrap_err(), over(40));
}

#[tokio::test]
async fn an_upload_url_is_refused_without_room_and_its_upload_past_it() {
    let w = world().await;
    let ann = w.master("ann");
    stored(&w, "Deck", 90).await;
    let offer = objects(&w)
        .offer_upload(&ann, named("Late"), None)
        .await
        .unwrap();
    // Declared over the 10 bytes left: refused, and the URL's object goes.
    let refused = objects(&w)
        .accept_offer(offer.token.expose(), Some(11))
        .await;
    assert_eq!(refused.unwrap_err(), over(90));
    assert_eq!(w.store.snapshot().objects.len(), 1);

    let offer = objects(&w)
        .offer_upload(&ann, named("Later"), None)
        .await
        .unwrap();
    let mut upload = objects(&w)
        .accept_offer(offer.token.expose(), None)
        .await
        .unwrap();
    upload.write(Bytes::from(vec![5; 10])).await.unwrap();
    assert_eq!(
        upload.write(Bytes::from_static(b"x")).await.unwrap_err(),
        over(90)
    );
    assert_eq!(w.store.snapshot().objects.len(), 1, "nothing of it stays");

    stored(&w, "Last", 10).await;
    let none_left = objects(&w).offer_upload(&ann, named("None"), None).await;
    assert_eq!(none_left.unwrap_err(), over(100));
}
