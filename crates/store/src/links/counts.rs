//! A link's counts on both backends: views per UTC day (with the link's total), bot views
//! and referrer hosts beside them, when it was last followed, and the counts read back.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{InfraError, LinkId};
use quire_links::{DayCount, LinkStats, VisitNotes};
use time::{Date, Month, OffsetDateTime};

use crate::db::{Database, with_conn, with_tx};
use crate::error::infra;
use crate::links::to_i64;
use crate::schema::{link_referrers, link_views_daily, links};
use crate::types::{DbId, DbTs};

/// Most referrer hosts kept per link and flush: past them, a flood of made-up referrers
/// adds no rows.
pub(crate) const MAX_REFERRERS_PER_FLUSH: usize = 50;
/// A day of a link's counts as stored: the day, views, bot views.
type DayRow = (String, i64, i64);

/// Most referrer hosts a link's counts list.
const MAX_REFERRERS_LISTED: usize = 50;

/// Inside a transaction: adds `$n` views to the link's count of `$day` (made at zero).
macro_rules! add_daily {
    ($conn:ident, $link:expr, $day:expr, $n:expr) => {
        diesel::insert_into(link_views_daily::table)
            .values((
                link_views_daily::link_id.eq($link),
                link_views_daily::day.eq($day),
                link_views_daily::views.eq($n),
            ))
            .on_conflict((link_views_daily::link_id, link_views_daily::day))
            .do_update()
            .set(
                link_views_daily::views
                    .eq(link_views_daily::views + diesel::upsert::excluded(link_views_daily::views)),
            )
            .execute($conn)
            .await?;
    };
}
pub(crate) use add_daily;

/// A UTC day as stored: `YYYY-MM-DD`, which sorts as the days do.
pub(crate) fn day_text(day: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

fn parse_day(text: &str) -> Option<Date> {
    let mut parts = text.splitn(3, '-');
    let year = parts.next()?.parse().ok()?;
    let month = Month::try_from(parts.next()?.parse::<u8>().ok()?).ok()?;
    let day = parts.next()?.parse().ok()?;
    Date::from_calendar_date(year, month, day).ok()
}

impl Database {
    pub(crate) async fn add_link_views(
        &self,
        counts: &[(LinkId, u64)],
        day: Date,
    ) -> Result<(), InfraError> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts: Vec<(DbId, i64)> = counts
            .iter()
            .map(|(id, n)| (DbId(id.0), to_i64(*n)))
            .collect();
        let day = day_text(day);
        with_tx!(self, |conn| {
            for (id, n) in &counts {
                let found = diesel::update(links::table.find(*id))
                    .set(links::view_count.eq(links::view_count + *n))
                    .execute(conn)
                    .await?;
                // A link deleted since the views were counted has no day to add them to.
                if found == 1 {
                    add_daily!(conn, *id, &day, *n);
                }
            }
            Ok(())
        })
        .map_err(infra)
    }

    pub(crate) async fn link_daily_views(
        &self,
        link: LinkId,
        since: Date,
    ) -> Result<Vec<(Date, u64)>, InfraError> {
        let since = day_text(since);
        let rows: Vec<(String, i64)> = with_conn!(self, |conn| {
            Ok(link_views_daily::table
                .filter(link_views_daily::link_id.eq(DbId(link.0)))
                .filter(link_views_daily::day.ge(&since))
                .filter(link_views_daily::views.gt(0))
                .order(link_views_daily::day.asc())
                .select((link_views_daily::day, link_views_daily::views))
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(|(day, n)| Ok((stored_day(&day)?, u64::try_from(n).unwrap_or(0))))
            .collect()
    }

    pub(crate) async fn add_link_visit_notes(
        &self,
        notes: &[VisitNotes],
        day: Date,
        now: OffsetDateTime,
    ) -> Result<(), InfraError> {
        if notes.is_empty() {
            return Ok(());
        }
        let day = day_text(day);
        let notes = notes.to_vec();
        with_tx!(self, |conn| {
            for note in &notes {
                let id = DbId(note.link.0);
                let exists: i64 = links::table.find(id).count().get_result(conn).await?;
                if exists == 0 {
                    continue;
                }
                if note.viewed {
                    diesel::update(links::table.find(id))
                        .set(links::last_viewed_at.eq(Some(DbTs(now))))
                        .execute(conn)
                        .await?;
                }
                if note.bot_views > 0 {
                    diesel::insert_into(link_views_daily::table)
                        .values((
                            link_views_daily::link_id.eq(id),
                            link_views_daily::day.eq(&day),
                            link_views_daily::views.eq(0_i64),
                            link_views_daily::bot_views.eq(to_i64(note.bot_views)),
                        ))
                        .on_conflict((link_views_daily::link_id, link_views_daily::day))
                        .do_update()
                        .set(link_views_daily::bot_views.eq(link_views_daily::bot_views
                            + diesel::upsert::excluded(link_views_daily::bot_views)))
                        .execute(conn)
                        .await?;
                }
                for (host, n) in note.referrers.iter().take(MAX_REFERRERS_PER_FLUSH) {
                    diesel::insert_into(link_referrers::table)
                        .values((
                            link_referrers::link_id.eq(id),
                            link_referrers::day.eq(&day),
                            link_referrers::host.eq(host),
                            link_referrers::views.eq(to_i64(*n)),
                        ))
                        .on_conflict((
                            link_referrers::link_id,
                            link_referrers::day,
                            link_referrers::host,
                        ))
                        .do_update()
                        .set(
                            link_referrers::views.eq(link_referrers::views
                                + diesel::upsert::excluded(link_referrers::views)),
                        )
                        .execute(conn)
                        .await?;
                }
            }
            Ok(())
        })
        .map_err(infra)
    }

    pub(crate) async fn read_link_stats(
        &self,
        link: LinkId,
        from: Date,
        to: Date,
    ) -> Result<LinkStats, InfraError> {
        let (from, to) = (day_text(from), day_text(to));
        let id = DbId(link.0);
        let (days, referrers): (Vec<DayRow>, Vec<(String, i64)>) = with_conn!(self, |conn| {
            let days = link_views_daily::table
                .filter(link_views_daily::link_id.eq(id))
                .filter(link_views_daily::day.ge(&from))
                .filter(link_views_daily::day.le(&to))
                .order(link_views_daily::day.asc())
                .select((
                    link_views_daily::day,
                    link_views_daily::views,
                    link_views_daily::bot_views,
                ))
                .load(conn)
                .await?;
            let referrers = link_referrers::table
                .filter(link_referrers::link_id.eq(id))
                .filter(link_referrers::day.ge(&from))
                .filter(link_referrers::day.le(&to))
                .select((link_referrers::host, link_referrers::views))
                .load(conn)
                .await?;
            Ok((days, referrers))
        })
        .map_err(infra)?;
        let days = days
            .into_iter()
            .map(|(day, views, bots)| {
                Ok(DayCount {
                    day: stored_day(&day)?,
                    views: u64::try_from(views).unwrap_or(0),
                    bot_views: u64::try_from(bots).unwrap_or(0),
                })
            })
            .collect::<Result<Vec<_>, InfraError>>()?;
        let mut by_host: HashMap<String, u64> = HashMap::new();
        for (host, n) in referrers {
            *by_host.entry(host).or_default() += u64::try_from(n).unwrap_or(0);
        }
        let mut referrers: Vec<(String, u64)> = by_host.into_iter().collect();
        referrers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        referrers.truncate(MAX_REFERRERS_LISTED);
        Ok(LinkStats { days, referrers })
    }
}

fn stored_day(text: &str) -> Result<Date, InfraError> {
    parse_day(text).ok_or_else(|| InfraError::new(format!("stored day {text:?} is not a date")))
}
