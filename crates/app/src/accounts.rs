//! Accounts and their dashboard sessions, activation and the invitation list, and the
//! flows that make or recover an account (first run, sign-up, password reset and change).

use quire_accounts::{
    AccountService, ActivationPorts, ActivationService, CaptchaKeys, InvitationList, SealingKey,
    SessionService,
};
use quire_signup::{FirstRun, Letterhead, PasswordChange, PasswordReset, SignUp, SignupPorts};

use crate::{Ports, Settings};

pub(crate) struct AccountServices {
    pub accounts: AccountService,
    pub sessions: SessionService,
    pub activation: ActivationService,
    pub invitations: InvitationList,
    pub first_run: FirstRun,
    pub sign_up: SignUp,
    pub password_reset: PasswordReset,
    pub password_change: PasswordChange,
}

/// The account services; `sealing` keeps the second factor's secrets.
pub(crate) fn accounts(ports: &Ports, settings: &Settings, sealing: SealingKey) -> AccountServices {
    let Ports {
        accounts: stores,
        mail,
        runtime,
        ..
    } = ports;
    let signup = SignupPorts {
        store: stores.signup.clone(),
        accounts: stores.accounts.clone(),
        limiter: runtime.limiter.clone(),
        mail: mail.dispatch.clone(),
        clock: runtime.clock.clone(),
        offload: runtime.offload.clone(),
    };
    let letterhead = Letterhead {
        base_url: settings.base_url.clone(),
        mail_from: settings.mail_from.clone(),
    };
    AccountServices {
        accounts: AccountService::new(
            stores.accounts.clone(),
            runtime.clock.clone(),
            runtime.offload.clone(),
        ),
        sessions: SessionService::new(
            stores.accounts.clone(),
            stores.sessions.clone(),
            runtime.limiter.clone(),
            runtime.clock.clone(),
            runtime.offload.clone(),
            sealing,
        ),
        activation: ActivationService::new(
            ActivationPorts {
                accounts: stores.accounts.clone(),
                invitations: stores.invitations.clone(),
                captchas: stores.captchas.clone(),
                limiter: runtime.limiter.clone(),
                clock: runtime.clock.clone(),
            },
            CaptchaKeys::new(&settings.captcha_secret, settings.captcha_cost),
        ),
        invitations: InvitationList::new(stores.invitations.clone(), runtime.clock.clone()),
        first_run: FirstRun::new(signup.clone(), letterhead.clone()),
        sign_up: SignUp::new(
            signup.clone(),
            letterhead.clone(),
            settings.sign_up,
            settings.activation,
        ),
        password_reset: PasswordReset::new(signup.clone(), letterhead.clone()),
        password_change: PasswordChange::new(signup, letterhead),
    }
}
