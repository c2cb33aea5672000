DROP TABLE publish_requests;
