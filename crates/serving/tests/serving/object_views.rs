//! A budgeted object's view cookie and the later ranges it frees, against the in-memory
//! fakes with a small table of counted cookies: a download counted when there is no place
//! to count its cookie frees no later range, even once places free up; and one owner's
//! downloads take at most its share of the places, so another owner's cookies are counted.

use bytes::Bytes;
use quire_kernel::Principal;
use quire_objects::NewObject;
use quire_pages::PageOrigins;
use quire_serving::{Answer, Asker, Conditions, IssuedCookie, ObjectAnswer, Visit, Visitor};
use quire_testkit::World;
use time::Duration;

async fn world(places: usize, per_owner: usize) -> World {
    World::builder()
        .accounts(&["ann", "bob"])
        .origins(&PageOrigins::parse("https://pages.test").unwrap())
        .settings(|s| {
            s.serving.counted_view_cookies = places;
            s.serving.counted_view_cookies_per_owner = per_owner;
        })
        .build()
        .await
}

/// A public object of 100 bytes with a budget of 20 downloads; its path.
async fn budgeted(w: &World, owner: &Principal, handle: &str) -> String {
    let mut upload = w
        .services
        .objects
        .begin(
            owner,
            NewObject {
                title: Some("Film".into()),
                policy: quire_links::PolicyInput {
                    access: Some("public".into()),
                    max_views: Some(20),
                    ..quire_links::PolicyInput::default()
                },
                ..NewObject::default()
            },
            None,
        )
        .await
        .unwrap();
    upload.write(Bytes::from(vec![1u8; 100])).await.unwrap();
    let view = upload.finish().await.unwrap();
    format!("/{handle}/{}", view.object.slug)
}

/// A `GET` of `path` with the view cookie `cookie` and a `Range` header.
async fn get(w: &World, path: &str, cookie: Option<&str>, range: Option<&str>) -> ObjectAnswer {
    let answer = w
        .services
        .serving
        .visit(Visit {
            owner: None,
            path,
            query: "",
            head: false,
            visitor: Visitor {
                view: cookie.into_iter().collect(),
                ..Visitor::default()
            },
            conditions: Conditions {
                range,
                ..Conditions::default()
            },
            accepts_gzip: false,
            asker: Asker::default(),
        })
        .await
        .unwrap();
    match answer {
        Answer::Object(object) => *object,
        other => panic!("{path}: {other:?}"),
    }
}

/// A counted download's view cookie.
async fn download(w: &World, path: &str) -> IssuedCookie {
    get(w, path, None, None)
        .await
        .cookie
        .expect("a counted download")
}

/// Whether a later range under `cookie` is free (no new cookie: not counted).
async fn free(w: &World, path: &str, cookie: &IssuedCookie) -> bool {
    let answer = get(w, path, Some(&cookie.value), Some("bytes=50-99")).await;
    assert_eq!(answer.length, 50);
    answer.cookie.is_none()
}

#[tokio::test]
async fn a_download_counted_without_a_place_frees_no_later_range() {
    let w = world(1, 1).await;
    let film = budgeted(&w, &w.master("ann"), "ann").await;
    let first = download(&w, &film).await;
    w.clock.advance(Duration::minutes(5));
    // No place left: the download goes whole, under a cookie with no count.
    let second = get(&w, &film, None, None).await;
    assert_eq!(second.length, 100);
    let second = second.cookie.unwrap();
    assert!(free(&w, &film, &first).await);
    assert!(!free(&w, &film, &second).await, "a download of its own");
    // Once the first cookie has expired its place is free, yet the second has no count.
    w.clock.advance(Duration::minutes(6));
    assert!(!free(&w, &film, &second).await);
}

#[tokio::test]
async fn one_owners_downloads_leave_the_other_places_to_other_owners() {
    let w = world(4, 2).await;
    let ann_film = budgeted(&w, &w.master("ann"), "ann").await;
    let bob_film = budgeted(&w, &w.master("bob"), "bob").await;
    let mut anns = Vec::new();
    for _ in 0..3 {
        anns.push(download(&w, &ann_film).await);
    }
    assert!(free(&w, &ann_film, &anns[0]).await);
    assert!(free(&w, &ann_film, &anns[1]).await);
    assert!(!free(&w, &ann_film, &anns[2]).await, "past ann's share");
    let bobs = download(&w, &bob_film).await;
    assert!(free(&w, &bob_film, &bobs).await, "bob's own place");
}
