//! Who is asking for a short link: a known preview or crawler (counted apart, never
//! spending a budget), a person's browser (shown the continue page of a budgeted link), and
//! the host that referred them (the only part of a `Referer` kept).

/// Parts of the user agents of link expanders and crawlers, lower case: chat and social
/// previews (Slack, Discord, Twitter/X, Facebook, WhatsApp, Telegram, LinkedIn, Skype,
/// iMessage, Mastodon), search engines, and the generic words crawlers name themselves by.
const BOT_MARKS: &[&str] = &[
    "slackbot",
    "slack-imgproxy",
    "discordbot",
    "twitterbot",
    "facebookexternalhit",
    "facebot",
    "meta-externalagent",
    "whatsapp",
    "telegrambot",
    "linkedinbot",
    "skypeuripreview",
    "applebot",
    "googlebot",
    "bingbot",
    "yandexbot",
    "duckduckbot",
    "redditbot",
    "pinterestbot",
    "embedly",
    "vkshare",
    "mastodon",
    "iframely",
    "bot/",
    "bot;",
    "crawler",
    "spider",
    "preview",
];

/// Whether a user agent is a known preview or crawler.
#[must_use]
pub fn is_bot(user_agent: Option<&str>) -> bool {
    let Some(ua) = user_agent else {
        return false;
    };
    let ua = ua.to_ascii_lowercase();
    BOT_MARKS.iter().any(|m| ua.contains(m))
}

/// Whether the client asks for HTML first-hand (a browser's navigation sends
/// `text/html`; curl and API clients send `*/*` or JSON).
#[must_use]
pub fn wants_html(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let kind = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (kind.eq_ignore_ascii_case("text/html")
                || kind.eq_ignore_ascii_case("application/xhtml+xml"))
                && !refused
        })
    })
}

/// The host of a `Referer` (lower case, without port or credentials), when it names one.
#[must_use]
pub fn referrer_host(referer: Option<&str>) -> Option<String> {
    let rest = referer?.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        host.split(':').next()?
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'_'));
    valid.then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_and_crawlers_are_bots_browsers_and_curl_are_not() {
        for ua in [
            "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
            "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
            "Twitterbot/1.0",
            "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
            "WhatsApp/2.23.20.0",
            "TelegramBot (like TwitterBot)",
            "LinkedInBot/1.0",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        ] {
            assert!(is_bot(Some(ua)), "{ua}");
        }
        for ua in [
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36",
            "curl/8.5.0",
            "quire/0.1",
        ] {
            assert!(!is_bot(Some(ua)), "{ua}");
        }
        assert!(!is_bot(None));
    }

    #[test]
    fn browsers_ask_for_html() {
        assert!(wants_html(Some(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        )));
        assert!(!wants_html(Some("*/*")));
        assert!(!wants_html(Some("text/html;q=0")));
        assert!(!wants_html(None));
    }

    #[test]
    fn only_the_referrers_host_is_kept() {
        let host = |r| referrer_host(Some(r));
        assert_eq!(
            host("https://News.Example.com/a/b?c#d").as_deref(),
            Some("news.example.com")
        );
        assert_eq!(
            host("http://user:pw@x.test:8080/").as_deref(),
            Some("x.test")
        );
        assert_eq!(
            host("https://[2001:db8::1]:443/").as_deref(),
            Some("2001:db8::1")
        );
        assert_eq!(host("android-app://com.slack/"), Some("com.slack".into()));
        assert_eq!(host("not a url"), None);
        assert_eq!(host("https:///path"), None);
        assert_eq!(referrer_host(None), None);
    }
}
