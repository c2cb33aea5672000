DROP TABLE link_views_daily;
