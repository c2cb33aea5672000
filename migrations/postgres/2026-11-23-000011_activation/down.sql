DROP TABLE captcha_uses;
DROP TABLE invitations;
