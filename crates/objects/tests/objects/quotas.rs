//! The account's quota of object bytes on the in-memory fakes, where the HTTP tests cannot
//! reach: uploads that race for the last room (two new objects, a replacement against a new
//! object, both written before either counts again) never both stay, and the loser leaves
//! nothing, or the bytes it replaced; two replacements of one object, or a change made
//! meanwhile, never leave the record naming removed bytes or undo the change; an upload URL
//! is refused when there is no room, and its upload past what is left.

use bytes::Bytes;
use quire_objects::{NewObject, ObjectError, ObjectPatch, ObjectService, ObjectView};
use quire_testkit::World;
use quire_testkit::memory::Op;

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
    let begin = |title| objects(&w).begin(&ann, named(title), None);
    let two = async || {
        let (mut first, mut second) = (
            begin("First").await.unwrap(),
            begin("Second").await.unwrap(),
        );
        // Each fits in what was free when it began.
        first.write(Bytes::from(vec![1; 60])).await.unwrap();
        second.write(Bytes::from(vec![2; 60])).await.unwrap();
        (first, second)
    };
    let anns_objects = || w.store.snapshot().objects;

    // Both ready, then both counted: each sees the other's bytes, and both are undone.
    let (first, second) = two().await;
    w.store.rendezvous(&[Op::MarkReady], 2);
    w.store.rendezvous(&[Op::StoredBytes], 2);
    let (a, b) = tokio::join!(first.finish(), second.finish());
    assert_eq!(a.unwrap_err(), over(60));
    assert_eq!(b.unwrap_err(), over(60));
    assert!(anns_objects().is_empty(), "{:?}", anns_objects());
    let state = w.store.snapshot();
    assert!(
        state.links.iter().all(|l| l.object().is_none()),
        "nor links"
    );
    assert!(w.object_bytes.stored().is_empty(), "nor bytes");

    // Both ready, then one counts and is undone before the other counts, which is kept.
    let (first, second) = two().await;
    w.store.rendezvous(&[Op::MarkReady], 2);
    let (kept, refused) = match tokio::join!(first.finish(), second.finish()) {
        (Ok(kept), Err(refused)) | (Err(refused), Ok(kept)) => (kept, refused),
        both => panic!("{both:?}"),
    };
    assert_eq!(refused, over(60));
    assert_eq!(anns_objects().len(), 1);
    assert_eq!(anns_objects()[0].0.id, kept.object.id);
    objects(&w).delete(&ann, kept.object.id).await.unwrap();

    // One after the other, the first is kept and the second sees it.
    let (first, second) = two().await;
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
    let mut notes = objects(&w).begin(&ann, named("Notes"), None).await.unwrap();
    // The old bytes leave the quota as the new come: 70 fit in the 100 then free, and 40
    // beside Deck's 50.
    replacing.write(Bytes::from(vec![3; 70])).await.unwrap();
    notes.write(Bytes::from(vec![4; 40])).await.unwrap();
    // Finished at once: both written, then both counted, then both undone.
    w.store.rendezvous(&[Op::MarkReady, Op::SwapContents], 2);
    w.store.rendezvous(&[Op::StoredBytes], 2);
    let (replaced, noted) = tokio::join!(replacing.finish(), notes.finish());
    assert_eq!(replaced.unwrap_err(), over(40));
    assert_eq!(noted.unwrap_err(), over(70));
    let kept = objects(&w).get(&ann, deck.object.id).await.unwrap();
    assert_eq!(kept.object, deck.object);
    assert_names_stored_bytes(&w, &kept);
    assert_eq!(w.store.snapshot().objects.len(), 1, "Notes went");
    assert_eq!(w.object_bytes.stored().len(), 1, "and both new bytes");

    // One after the other: the replacement sees Notes.
    let mut replacing = objects(&w)
        .begin_replace(&ann, deck.object.id, None, None, None)
        .await
        .unwrap();
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

/// The object as stored names bytes that are stored.
#[track_caller]
fn assert_names_stored_bytes(w: &World, view: &ObjectView) {
    let stored = w.object_bytes.stored();
    assert!(
        stored
            .iter()
            .any(|(id, blob, _)| *id == view.object.id && *blob == view.object.blob),
        "{:?} names {} of {stored:?}",
        view.object.id,
        view.object.blob
    );
}

#[tokio::test]
async fn a_replacement_refused_after_another_won_leaves_the_winners_bytes_named() {
    let w = world().await;
    let ann = w.master("ann");
    let deck = stored(&w, "Deck", 50).await;
    let id = deck.object.id;
    let mut loser = objects(&w)
        .begin_replace(&ann, id, None, None, None)
        .await
        .unwrap();
    let mut winner = objects(&w)
        .begin_replace(&ann, id, None, None, None)
        .await
        .unwrap();
    loser.write(Bytes::from(vec![6; 70])).await.unwrap();
    winner.write(Bytes::from(vec![7; 10])).await.unwrap();
    let won = winner.finish().await.unwrap();
    stored(&w, "Notes", 40).await;
    // The loser's 70 beside Notes' 40 pass the 100: refused, and the record keeps naming
    // the winner's bytes, not the ones the winner removed.
    assert_eq!(loser.finish().await.unwrap_err(), over(40));

    let kept = objects(&w).get(&ann, id).await.unwrap();
    assert_eq!(kept.object.blob, won.object.blob);
    assert_eq!(kept.object.size_bytes, 10);
    assert_names_stored_bytes(&w, &kept);
    assert_eq!(
        w.object_bytes.stored().len(),
        2,
        "Deck's new bytes and Notes'"
    );
    let download = objects(&w).download(&ann, id).await.unwrap();
    assert_eq!(download.object.size_bytes, 10);
}

#[tokio::test]
async fn a_change_made_while_new_bytes_arrive_stays_whether_they_are_taken_or_refused() {
    let w = world().await;
    let ann = w.master("ann");
    let deck = stored(&w, "Deck", 50).await;
    let id = deck.object.id;
    let retitle = |title: &str| ObjectPatch {
        title: Some(title.into()),
        ..ObjectPatch::default()
    };

    let mut taken = objects(&w)
        .begin_replace(&ann, id, None, None, None)
        .await
        .unwrap();
    taken.write(Bytes::from(vec![8; 20])).await.unwrap();
    objects(&w)
        .update(&ann, id, retitle("Renamed"))
        .await
        .unwrap();
    let done = taken.finish().await.unwrap();
    assert_eq!(done.object.title, "Renamed");
    assert_eq!(done.object.size_bytes, 20);
    assert_eq!(objects(&w).get(&ann, id).await.unwrap().object, done.object);

    let mut refused = objects(&w)
        .begin_replace(&ann, id, Some("later.txt"), None, None)
        .await
        .unwrap();
    refused.write(Bytes::from(vec![9; 70])).await.unwrap();
    stored(&w, "Notes", 40).await;
    objects(&w)
        .update(&ann, id, retitle("Again"))
        .await
        .unwrap();
    assert_eq!(refused.finish().await.unwrap_err(), over(40));
    let kept = objects(&w).get(&ann, id).await.unwrap().object;
    assert_eq!(kept.title, "Again", "the change made meanwhile stays");
    assert_eq!(
        (kept.size_bytes, kept.blob.as_str(), kept.filename.as_str()),
        (20, done.object.blob.as_str(), done.object.filename.as_str()),
        "the bytes, and the name they came with, are the ones before"
    );
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
