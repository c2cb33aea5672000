//! The second factor's life: enrollment (the pending secret kept sealed with the session
//! that began it), the code at sign-in (or a recovery code instead), new recovery codes,
//! and turning it off, which takes a code too.
//!
//! Only wrong codes count, whatever page they came from, under the rule of password
//! sign-in: [`CODES_PER_ACCOUNT`](crate::session::CODES_PER_ACCOUNT) per account, past
//! which only addresses that have not failed against the account may try, so someone who
//! knows the password cannot keep the owner's right code out.

use quire_kernel::{InfraError, address_key};
use time::OffsetDateTime;

use crate::mfa::TotpSecret;
use crate::model::Account;
use crate::recovery::{RecoveryCodes, recovery_code_hash};
use crate::sealing::UnsealError;
use crate::session::{SECOND_FACTOR, SecondFactorError, Session, SessionService, Slots};

impl From<UnsealError> for SecondFactorError {
    fn from(e: UnsealError) -> Self {
        Self::Infra(InfraError::new(e.to_string()))
    }
}

impl SessionService {
    /// The secret this session is enrolling: the one it began with (so a reload shows the
    /// code already scanned), or a new one kept sealed with the session.
    ///
    /// # Errors
    /// `AlreadyEnrolled`; `Infra` on storage failure or a pending secret that does not
    /// open under this server's key.
    pub async fn pending_enrollment(
        &self,
        session: &Session,
        account: &Account,
    ) -> Result<TotpSecret, SecondFactorError> {
        if account.totp_secret.is_some() {
            return Err(SecondFactorError::AlreadyEnrolled);
        }
        if let Some(sealed) = &session.pending_totp {
            return Ok(self.sealing.open_totp(account.id, sealed)?);
        }
        let secret = TotpSecret::generate();
        let sealed = self.sealing.seal_totp(account.id, &secret);
        self.sessions
            .set_pending_totp(&session.id_hash, Some(&sealed))
            .await?;
        Ok(secret)
    }

    /// Enrolls the session's pending secret once `code` proves the authenticator app
    /// holds it, with a fresh set of recovery codes, returned for the one page that shows
    /// them. Other sessions of the account must then give the code too.
    ///
    /// # Errors
    /// `AlreadyEnrolled`, `Throttled`, `NotStarted` (no pending secret in this session),
    /// `WrongCode`; nothing changes on error.
    pub async fn confirm_enrollment(
        &self,
        session: &Session,
        account: &Account,
        code: &str,
        client_ip: &str,
    ) -> Result<RecoveryCodes, SecondFactorError> {
        if account.totp_secret.is_some() {
            return Err(SecondFactorError::AlreadyEnrolled);
        }
        let mut slots = Vec::new();
        let result = self
            .enroll(session, account, code, client_ip, &mut slots)
            .await;
        self.settle_code(slots, &result).await?;
        result
    }

    async fn enroll(
        &self,
        session: &Session,
        account: &Account,
        code: &str,
        client_ip: &str,
        slots: &mut Slots,
    ) -> Result<RecoveryCodes, SecondFactorError> {
        let now = self.clock.now();
        self.take_code_try(account, client_ip, slots, now).await?;
        let sealed = session
            .pending_totp
            .as_ref()
            .ok_or(SecondFactorError::NotStarted)?;
        let secret = self.sealing.open_totp(account.id, sealed)?;
        let step = secret
            .matching_step(code, now)
            .ok_or(SecondFactorError::WrongCode)?;
        let codes = RecoveryCodes::generate();
        let enrolled = self
            .accounts
            .enroll_totp(
                account.id,
                sealed,
                step,
                &session.id_hash,
                &codes.hashes(),
                now,
            )
            .await?;
        if enrolled {
            Ok(codes)
        } else {
            Err(SecondFactorError::AlreadyEnrolled)
        }
    }

    /// Checks a code from the account's authenticator app, or one of its recovery codes
    /// (spent by this use), and if right marks the session as having given the second
    /// factor.
    ///
    /// # Errors
    /// `NotEnrolled`, `Throttled`, `WrongCode` (also for a code already used).
    pub async fn give_second_factor(
        &self,
        session: &Session,
        account: &Account,
        code: &str,
        client_ip: &str,
    ) -> Result<(), SecondFactorError> {
        self.check_code(account, code, client_ip).await?;
        self.sessions.mark_mfa_satisfied(&session.id_hash).await?;
        Ok(())
    }

    /// Turns the second factor off, given a current code or a recovery code; every session
    /// of the account then needs only the password.
    ///
    /// # Errors
    /// `NotEnrolled`, `Throttled`, `WrongCode`; nothing changes on error.
    pub async fn turn_off_second_factor(
        &self,
        account: &Account,
        code: &str,
        client_ip: &str,
    ) -> Result<(), SecondFactorError> {
        self.check_code(account, code, client_ip).await?;
        if self.accounts.remove_totp(account.id).await? {
            Ok(())
        } else {
            Err(SecondFactorError::NotEnrolled)
        }
    }

    /// Replaces the account's recovery codes with a new set, given a current code or a
    /// recovery code; the old ones stop working.
    ///
    /// # Errors
    /// `NotEnrolled`, `Throttled`, `WrongCode`; nothing changes on error.
    pub async fn new_recovery_codes(
        &self,
        account: &Account,
        code: &str,
        client_ip: &str,
    ) -> Result<RecoveryCodes, SecondFactorError> {
        self.check_code(account, code, client_ip).await?;
        let codes = RecoveryCodes::generate();
        if self
            .accounts
            .replace_recovery_codes(account.id, &codes.hashes(), self.clock.now())
            .await?
        {
            Ok(codes)
        } else {
            Err(SecondFactorError::NotEnrolled)
        }
    }

    /// How many unused recovery codes the account holds.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn recovery_codes_left(&self, account: &Account) -> Result<u64, InfraError> {
        self.accounts.recovery_codes_left(account.id).await
    }

    /// Seals every second-factor secret stored bare before sealing began (run at start-up;
    /// replicas racing each seal a secret once). Returns how many this call sealed.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, or for a bare value that is not a secret.
    pub async fn seal_legacy_secrets(&self) -> Result<u64, InfraError> {
        let mut sealed = 0;
        for (id, old) in self.accounts.legacy_totp_secrets().await? {
            let secret = self
                .sealing
                .open_totp(id, &old)
                .map_err(|e| InfraError::new(e.to_string()))?;
            let new = self.sealing.seal_totp(id, &secret);
            if self.accounts.reseal_totp(id, &old, &new).await? {
                sealed += 1;
            }
        }
        Ok(sealed)
    }

    /// A current TOTP code (each step used once) or an unused recovery code (spent).
    async fn check_code(
        &self,
        account: &Account,
        code: &str,
        client_ip: &str,
    ) -> Result<(), SecondFactorError> {
        let mut slots = Vec::new();
        let result = self.try_code(account, code, client_ip, &mut slots).await;
        self.settle_code(slots, &result).await?;
        result
    }

    async fn try_code(
        &self,
        account: &Account,
        code: &str,
        client_ip: &str,
        slots: &mut Slots,
    ) -> Result<(), SecondFactorError> {
        let sealed = account
            .totp_secret
            .as_ref()
            .ok_or(SecondFactorError::NotEnrolled)?;
        let now = self.clock.now();
        self.take_code_try(account, client_ip, slots, now).await?;
        let accepted = if let Some(hash) = recovery_code_hash(code) {
            self.accounts
                .use_recovery_code(account.id, &hash, now)
                .await?
        } else {
            let secret = self.sealing.open_totp(account.id, sealed)?;
            match secret.matching_step(code, now) {
                Some(step) => self.accounts.use_totp_step(account.id, step).await?,
                None => false,
            }
        };
        if accepted {
            Ok(())
        } else {
            Err(SecondFactorError::WrongCode)
        }
    }

    /// Takes the slots of one code, as a password try takes them at sign-in.
    async fn take_code_try(
        &self,
        account: &Account,
        client_ip: &str,
        slots: &mut Slots,
        now: OffsetDateTime,
    ) -> Result<(), SecondFactorError> {
        let budget_key = format!("account:{}", account.id.0);
        self.take_try(
            &SECOND_FACTOR,
            budget_key,
            address_key(client_ip),
            None,
            slots,
            now,
        )
        .await?
        .map_err(|_| SecondFactorError::Throttled)
    }

    /// A wrong code keeps its slots; anything else (a right code, a refusal, a storage
    /// failure) was no guess and gives them back.
    async fn settle_code<T>(
        &self,
        slots: Slots,
        result: &Result<T, SecondFactorError>,
    ) -> Result<(), InfraError> {
        self.settle(slots, matches!(result, Err(SecondFactorError::WrongCode)))
            .await
    }
}
