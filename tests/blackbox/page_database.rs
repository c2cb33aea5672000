//! Pages that know their database: a page published with `database: <slug>` (a database of
//! its owner, in its project) answers `/-/db.json` on its own origin with the data API's URL
//! and anon key, under the page's own access rule; a slug of nothing, of another project or
//! of another owner is refused at publish and patch, changing nothing.

use serde_json::{Value, json};

use crate::databases::{DATABASES, create, enable_data_api, sql, with_cluster};
use crate::harness::{Account, Backend, Reply, Server, on_both_backends};
use crate::serving::visitor;

const PAGES: &str = "/api/page/v1/pages";

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    a_page_hands_its_scripts_the_database_it_names,
    a_page_names_only_a_database_of_its_owner_in_its_project,
    a_guarded_page_gives_its_database_only_to_whom_it_admits
);

/// A database `slug` in `project` (default: the home one) with a table `notes` that `anon`
/// may read, its data API on; returns its id and secret.
async fn database(srv: &Server, key: &str, slug: &str, project: Option<&str>) -> (String, Value) {
    let mut body = json!({ "slug": slug });
    if let Some(p) = project {
        body["project"] = Value::from(p);
    }
    let made = create(srv, key, body).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(
        srv,
        key,
        &id,
        "create table notes (id int primary key, body text);
         insert into notes values (1, 'first'), (2, 'second');",
    )
    .await
    .assert_status(200);
    let secret = enable_data_api(srv, key, &id).await;
    (id, secret)
}

fn site(slug: &str, extra: &Value) -> Value {
    let mut body = json!({
        "title": slug,
        "slug": slug,
        "access": "public",
        "files": [{"path": "index.html", "content": "<h1>hello</h1>"}],
    });
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn get(url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = visitor().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let r = request.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap();
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        headers,
    }
}

fn header<'a>(r: &'a Reply, name: &str) -> &'a str {
    r.headers.get(name).map_or("", |v| v.to_str().unwrap_or(""))
}

async fn page_count(srv: &Server, ann: &Account) -> usize {
    srv.get(PAGES, &ann.key).await.assert_status(200)["pages"]
        .as_array()
        .unwrap()
        .len()
}

async fn a_page_hands_its_scripts_the_database_it_names(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (_, secret) = database(&srv, &ann.key, "shop", None).await;
    let anon = secret["anonKey"].as_str().unwrap();
    let published = srv
        .post(PAGES, &ann.key, site("app", &json!({"database": "shop"})))
        .await;
    let page = published.assert_status(201).clone();
    assert_eq!(page["database"], "shop");
    let id = page["id"].as_str().unwrap();
    let fetched = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    assert_eq!(fetched.assert_status(200)["database"], "shop");

    // Under the page, and at the origin's root for the page its `Referer` names.
    let owner = srv.owner("ann");
    let base = srv.base.trim_end_matches('/');
    let expected = json!({
        "url": format!("{base}/db/shop"),
        "restUrl": format!("{base}/db/shop/rest/v1"),
        "authUrl": format!("{base}/db/shop/auth/v1"),
        "anonKey": anon,
    });
    let referer = format!("{owner}/app/index.html");
    for r in [
        get(&format!("{owner}/app/-/db.json"), &[]).await,
        get(&format!("{owner}/-/db.json"), &[("referer", &referer)]).await,
    ] {
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body, expected);
        assert_eq!(header(&r, "content-type"), "application/json");
        assert_eq!(header(&r, "cache-control"), "no-store");
    }
    // The root without a page to name, or named by another host: nothing.
    assert_eq!(get(&format!("{owner}/-/db.json"), &[]).await.status, 404);
    let elsewhere = format!("{}/app/", srv.owner("bob"));
    let r = get(&format!("{owner}/-/db.json"), &[("referer", &elsewhere)]).await;
    assert_eq!(r.status, 404);
    // Not a page's file: no other method.
    let r = visitor()
        .post(format!("{owner}/app/-/db.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);

    // What supabase-js does with it: the anon key reads what `anon` may read.
    let rows = srv
        .http
        .get(format!(
            "{}/notes?select=body&order=id",
            expected["restUrl"].as_str().unwrap()
        ))
        .header("apikey", anon)
        .header("authorization", format!("Bearer {anon}"))
        .send()
        .await
        .unwrap();
    assert_eq!(rows.status(), 200);
    assert_eq!(
        rows.json::<Value>().await.unwrap(),
        json!([{ "body": "first" }, { "body": "second" }])
    );

    // A page without a database, and one whose database's data API is off: 404.
    srv.post(PAGES, &ann.key, site("plain", &json!({})))
        .await
        .assert_status(201);
    let r = get(&format!("{owner}/plain/-/db.json"), &[]).await;
    assert_eq!(
        (r.status, r.body["error"].clone()),
        (404, json!("not_found"))
    );
    assert_eq!(header(&r, "cache-control"), "no-store");
    assert!(!r.text.contains(anon));
    let made = create(&srv, &ann.key, json!({ "slug": "dormant" })).await;
    srv.post(
        PAGES,
        &ann.key,
        site("idle", &json!({"database": "dormant"})),
    )
    .await
    .assert_status(201);
    assert_eq!(
        get(&format!("{owner}/idle/-/db.json"), &[]).await.status,
        404
    );
    let dormant = made["id"].as_str().unwrap();
    srv.post(
        &format!("{DATABASES}/{dormant}/data-api"),
        &ann.key,
        json!({}),
    )
    .await
    .assert_status(202);
    let r = get(&format!("{owner}/idle/-/db.json"), &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["restUrl"], format!("{base}/db/dormant/rest/v1"));

    // Patch: another database, then none.
    let r = srv
        .patch(
            &format!("{PAGES}/{id}"),
            &ann.key,
            json!({"database": "dormant"}),
        )
        .await;
    assert_eq!(r.assert_status(200)["database"], "dormant");
    let r = get(&format!("{owner}/app/-/db.json"), &[]).await;
    assert_eq!(r.body["url"], format!("{base}/db/dormant"));
    let r = srv
        .patch(
            &format!("{PAGES}/{id}"),
            &ann.key,
            json!({"database": null}),
        )
        .await;
    assert_eq!(r.assert_status(200)["database"], Value::Null);
    assert_eq!(
        get(&format!("{owner}/app/-/db.json"), &[]).await.status,
        404
    );
    // A page's other fields leave it as it is.
    let r = srv
        .patch(
            &format!("{PAGES}/{id}"),
            &ann.key,
            json!({"database": "shop"}),
        )
        .await;
    r.assert_status(200);
    let r = srv
        .patch(&format!("{PAGES}/{id}"), &ann.key, json!({"title": "App"}))
        .await;
    assert_eq!(r.assert_status(200)["database"], "shop");
}

async fn a_page_names_only_a_database_of_its_owner_in_its_project(b: Backend) {
    let (db, srv, ann) = with_cluster(b, &[]).await;
    database(&srv, &ann.key, "shop", None).await;
    srv.project(&ann.key, "other").await;
    database(&srv, &ann.key, "elsewhere", Some("other")).await;
    let bob = db.create_account("bob", &[]);
    database(&srv, &bob.key, "bobs", None).await;
    let page = srv
        .post(PAGES, &ann.key, site("app", &json!({})))
        .await
        .assert_status(201)
        .clone();
    let id = page["id"].as_str().unwrap();
    let before = page_count(&srv, &ann).await;

    for slug in ["nowhere", "elsewhere", "bobs", "Not A Slug"] {
        let r = srv
            .post(PAGES, &ann.key, site("again", &json!({"database": slug})))
            .await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.body["message"].as_str().unwrap().contains("database"),
            "{}",
            r.body
        );
        let r = srv
            .patch(
                &format!("{PAGES}/{id}"),
                &ann.key,
                json!({"database": slug, "title": "Changed"}),
            )
            .await;
        r.assert_error(400, "invalid_request");
    }
    assert_eq!(page_count(&srv, &ann).await, before, "no page was made");
    let now = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    let now = now.assert_status(200);
    assert_eq!(
        (now["title"].clone(), now["database"].clone()),
        (json!("app"), Value::Null)
    );

    // In the other project, its database is the page's to name.
    let r = srv
        .post(
            PAGES,
            &ann.key,
            site(
                "other-app",
                &json!({"database": "elsewhere", "project": "other"}),
            ),
        )
        .await;
    assert_eq!(r.assert_status(201)["database"], "elsewhere");
    let r = get(&format!("{}/other-app/-/db.json", srv.owner("ann")), &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

async fn a_guarded_page_gives_its_database_only_to_whom_it_admits(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (_, secret) = database(&srv, &ann.key, "shop", None).await;
    let anon = secret["anonKey"].as_str().unwrap();
    let owner = srv.owner("ann");
    srv.post(
        PAGES,
        &ann.key,
        site(
            "secret",
            &json!({"database": "shop", "access": "password", "password": "open sesame"}),
        ),
    )
    .await
    .assert_status(201);
    srv.post(
        PAGES,
        &ann.key,
        site("mine", &json!({"database": "shop", "access": "private"})),
    )
    .await
    .assert_status(201);

    // Without the password: the page's form, not the key.
    let r = get(&format!("{owner}/secret/-/db.json"), &[]).await;
    assert_eq!(r.status, 401, "{}", r.text);
    assert!(!r.text.contains(anon));
    assert_eq!(header(&r, "cache-control"), "no-store");
    let referer = format!("{owner}/secret/");
    let r = get(&format!("{owner}/-/db.json"), &[("referer", &referer)]).await;
    assert_eq!(r.status, 401);
    assert!(!r.text.contains(anon));
    // With it, the key.
    let unlocked = visitor()
        .post(format!("{owner}/-/unlock"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", &owner)
        .body("handle=ann&slug=secret&next=&password=open+sesame")
        .send()
        .await
        .unwrap();
    assert_eq!(unlocked.status().as_u16(), 303);
    let cookie = unlocked
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("quire_unlock_secret="))
        .expect("unlock cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let r = get(&format!("{owner}/secret/-/db.json"), &[("cookie", &cookie)]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["anonKey"], anon);

    // A private page: the sign-in page for a visitor, the key for a key of its project.
    let r = get(&format!("{owner}/mine/-/db.json"), &[]).await;
    assert_ne!(r.status, 200);
    assert!(!r.text.contains(anon));
    let bearer = format!("Bearer {}", ann.key);
    let r = get(
        &format!("{owner}/mine/-/db.json"),
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["anonKey"], anon);
}
