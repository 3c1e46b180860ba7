// Latchkey pages: passkey registration, sign-in and credential management.
// No framework, no third-party code; the page passes its data in data- attributes of #app.
'use strict';

(function () {
  const app = document.getElementById('app');
  if (!app) return;
  const base = app.dataset.base || '';
  const $ = (id) => document.getElementById(id);
  // The page's language: its messages travel in data-messages (the server's catalogue).
  let messages = {};
  try { messages = JSON.parse(app.dataset.messages || '{}'); } catch (_) { /* English ids */ }
  const t = (id) => messages[id] || id;

  // --- encoding -----------------------------------------------------------------------------
  function fromB64url(s) {
    const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function toB64url(buf) {
    const bytes = new Uint8Array(buf);
    let bin = '';
    for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function creationOptions(o) {
    return Object.assign({}, o, {
      challenge: fromB64url(o.challenge),
      user: Object.assign({}, o.user, { id: fromB64url(o.user.id) }),
      excludeCredentials: (o.excludeCredentials || []).map((c) => Object.assign({}, c, { id: fromB64url(c.id) })),
    });
  }
  function requestOptions(o) {
    return Object.assign({}, o, {
      challenge: fromB64url(o.challenge),
      allowCredentials: (o.allowCredentials || []).map((c) => Object.assign({}, c, { id: fromB64url(c.id) })),
    });
  }
  function registrationJSON(c) {
    return {
      id: c.id,
      rawId: toB64url(c.rawId),
      type: c.type,
      authenticatorAttachment: c.authenticatorAttachment || null,
      response: {
        clientDataJSON: toB64url(c.response.clientDataJSON),
        attestationObject: toB64url(c.response.attestationObject),
        transports: c.response.getTransports ? c.response.getTransports() : [],
      },
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
    };
  }
  function assertionJSON(c) {
    return {
      id: c.id,
      rawId: toB64url(c.rawId),
      type: c.type,
      response: {
        clientDataJSON: toB64url(c.response.clientDataJSON),
        authenticatorData: toB64url(c.response.authenticatorData),
        signature: toB64url(c.response.signature),
        userHandle: c.response.userHandle ? toB64url(c.response.userHandle) : null,
      },
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
    };
  }

  // --- talking to the server -------------------------------------------------------------------
  async function api(method, path, body) {
    const init = { method, credentials: 'same-origin', headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(base + path, init);
    let data = null;
    try { data = await res.json(); } catch (_) { /* 204 and friends */ }
    if (!res.ok) {
      const err = new Error((data && data.error_description) || (t('js-server-error') + ' (HTTP ' + res.status + ')'));
      err.code = data && data.error;
      throw err;
    }
    return data;
  }

  function supported() {
    return !!(window.PublicKeyCredential && navigator.credentials && navigator.credentials.create);
  }

  function explain(err) {
    // A refusal by the tenant's attestation policy is for the person, in their language.
    if (err && err.code === 'authenticator_not_allowed') return t('js-authenticator-not-allowed');
    switch (err && err.name) {
      case 'NotAllowedError':
        return t('js-not-allowed');
      case 'InvalidStateError':
        return t('js-invalid-state');
      case 'SecurityError':
        return t('js-security');
      case 'NotSupportedError':
        return t('js-not-supported');
      case 'AbortError':
        return t('js-abort');
      default:
        return (err && err.message) || t('js-generic');
    }
  }

  function say(message, kind) {
    const el = $('status');
    if (!el) return;
    // An error is announced at once (an alert); progress and success politely (a status). The
    // role changes before the text, so the new text is read with the new role.
    el.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    el.setAttribute('aria-live', kind === 'error' ? 'assertive' : 'polite');
    el.textContent = message;
    el.className = 'status' + (kind ? ' ' + kind : '');
  }

  async function register(params) {
    const options = await api('POST', '/register/start', params);
    const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
    return api('POST', '/register/finish', { credential: registrationJSON(credential), challenge: options.challenge });
  }

  async function signIn(username) {
    const options = await api('POST', '/auth/start', username ? { username } : {});
    const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
    return api('POST', '/auth/finish', { assertion: assertionJSON(credential), challenge: options.challenge });
  }

  function busy(buttons, on) {
    buttons.forEach((b) => { if (b) b.disabled = on; });
  }

  // --- pages -----------------------------------------------------------------------------------
  function invitePage() {
    const buttons = [$('create-platform'), $('create-roaming')];
    const go = (authenticator) => async () => {
      busy(buttons, true);
      say(authenticator === 'roaming' ? t('js-tap-key') : t('js-follow-device'));
      try {
        await register({
          username: app.dataset.email,
          display_name: app.dataset.name,
          invite: app.dataset.token,
          authenticator,
        });
        say(t('js-passkey-ready'), 'ok');
        window.location.assign(base + '/account');
      } catch (e) {
        say(explain(e), 'error');
        busy(buttons, false);
      }
    };
    buttons[0].addEventListener('click', go('platform'));
    buttons[1].addEventListener('click', go('roaming'));
  }

  // After a social sign-in without a passkey, once: add one now (then go on), or go on.
  function offerPasskeyPage() {
    const button = $('add-passkey');
    button.addEventListener('click', async () => {
      busy([button], true);
      say(t('js-follow-device'));
      try {
        await register({ username: app.dataset.email, display_name: app.dataset.name, authenticator: 'platform' });
        say(t('js-passkey-added'), 'ok');
        window.location.assign(app.dataset.next);
      } catch (e) {
        say(explain(e), 'error');
        busy([button], false);
      }
    });
  }

  function signInPage() {
    const done = () => window.location.assign(window.location.href);
    const button = $('signin');
    button.addEventListener('click', async () => {
      busy([button], true);
      say(t('js-choose-passkey'));
      try { await signIn(null); done(); } catch (e) { say(explain(e), 'error'); busy([button], false); }
    });
    $('signin-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      say(t('js-follow-device'));
      try { await signIn($('username').value.trim()); done(); } catch (e) { say(explain(e), 'error'); }
    });
  }

  // The hosted OIDC login page: after a sign-in, continue the pending authorization request.
  function loginPage() {
    const resume = () => window.location.assign(base + '/authorize/resume?request=' + encodeURIComponent(app.dataset.request));
    let conditional = null;
    const stopConditional = async () => {
      if (!conditional) return;
      conditional.abort();
      conditional = null;
      // Give the browser a moment to drop the pending autofill request before a new one.
      await new Promise((r) => setTimeout(r, 50));
    };
    async function autofill() {
      // Conditional UI: passkeys offered in the username field's autofill, when the browser can.
      if (!window.PublicKeyCredential || !PublicKeyCredential.isConditionalMediationAvailable) return;
      if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return;
      conditional = new AbortController();
      const signal = conditional.signal;
      try {
        const options = await api('POST', '/auth/start', {});
        const credential = await navigator.credentials.get({ publicKey: requestOptions(options), mediation: 'conditional', signal });
        await api('POST', '/auth/finish', { assertion: assertionJSON(credential), challenge: options.challenge });
        resume();
      } catch (e) {
        if (!signal.aborted && e.name !== 'AbortError') say(explain(e), 'error');
      }
    }
    const buttons = [$('signin')];
    $('signin').addEventListener('click', async () => {
      await stopConditional();
      busy(buttons, true);
      say(t('js-choose-passkey'));
      try { await signIn(null); resume(); } catch (e) { say(explain(e), 'error'); busy(buttons, false); }
    });
    $('signin-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      await stopConditional();
      say(t('js-follow-device'));
      try { await signIn($('username').value.trim()); resume(); } catch (e) { say(explain(e), 'error'); }
    });
    autofill();
  }

  // The device authorization page (RFC 8628): the code from the device, a sign-in, a decision.
  const SCOPE_TEXT = {
    openid: 'who you are (your account id)',
    profile: 'your name and picture',
    email: 'your e-mail address',
    offline_access: 'staying signed in (refresh tokens)',
    credentials: 'managing your passkeys',
  };
  function devicePage() {
    const sections = ['device-code', 'device-signin', 'device-confirm', 'device-done'];
    const show = (id) => sections.forEach((s) => { $(s).hidden = s !== id; });
    let code = null;
    let email = app.dataset.email || '';
    // A social sign-in leaves the page and comes back to /device: the code waits in this tab.
    const KEPT = 'latchkey-device-code';
    const input = $('user-code');
    if (!input.value && window.sessionStorage) input.value = sessionStorage.getItem(KEPT) || '';
    document.querySelectorAll('#device-signin a.social').forEach((a) => a.addEventListener('click', () => {
      if (window.sessionStorage && code) sessionStorage.setItem(KEPT, code);
    }));
    function confirm() {
      $('device-user').textContent = email;
      // Next to Approve: a code typed from a phishing message would not be the device's.
      $('device-code-shown').textContent = code;
      show('device-confirm');
      say('');
    }
    $('device-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      say(t('js-checking-code'));
      try {
        const found = await api('POST', '/device/lookup', { user_code: $('user-code').value });
        code = found.user_code;
        document.querySelectorAll('[data-field=app]').forEach((el) => { el.textContent = found.client_name; });
        $('device-scopes').replaceChildren(...found.scopes.map((s) => {
          const li = document.createElement('li');
          li.dataset.scope = s;
          li.textContent = SCOPE_TEXT[s] || s;
          return li;
        }));
        if (email) confirm(); else { show('device-signin'); say(''); }
      } catch (e) {
        say(explain(e), 'error');
      }
    });
    const signin = $('signin');
    signin.addEventListener('click', async () => {
      busy([signin], true);
      say(t('js-choose-passkey'));
      try {
        const done = await signIn(null);
        email = (done && done.user && done.user.email) || email;
        confirm();
      } catch (e) {
        say(explain(e), 'error');
      }
      busy([signin], false);
    });
    const buttons = [$('approve'), $('deny')];
    const decide = (approve) => async () => {
      busy(buttons, true);
      try {
        const r = await api('POST', '/device/decide', { user_code: code, approve });
        $('device-result').textContent = r.status === 'approved'
          ? t('js-approved')
          : t('js-denied');
        app.dataset.status = r.status;
        if (window.sessionStorage) sessionStorage.removeItem(KEPT);
        show('device-done');
        say('');
      } catch (e) {
        if (e.code === 'login_required') { email = ''; show('device-signin'); }
        say(explain(e), 'error');
      }
      busy(buttons, false);
    };
    buttons[0].addEventListener('click', decide(true));
    buttons[1].addEventListener('click', decide(false));
  }

  function credentialItem(c, only) {
    const li = document.createElement('li');
    li.dataset.id = c.id;
    li.dataset.type = c.type;
    const name = document.createElement('span');
    name.className = 'name';
    name.dataset.field = 'name';
    name.textContent = c.name;
    const meta = document.createElement('span');
    meta.className = 'meta';
    meta.textContent = (c.type === 'roaming' ? t('js-security-key') : t('js-passkey')) + ' · ' + c.device + ' · ' + t('js-added') + ' ' + c.created;
    const rename = document.createElement('button');
    rename.type = 'button';
    rename.className = 'link';
    rename.dataset.action = 'rename';
    rename.textContent = t('js-rename');
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'link danger';
    remove.dataset.action = 'remove';
    remove.textContent = t('js-remove');
    if (only) {
      remove.disabled = true;
      remove.title = t('js-only-one');
    }
    li.append(name, meta, rename, remove);
    return li;
  }

  async function accountPage() {
    const list = $('credentials');
    async function load() {
      const creds = await api('GET', '/api/credentials');
      list.replaceChildren(...creds.map((c) => credentialItem(c, creds.length === 1)));
      $('advice').hidden = creds.length >= 2;
      app.dataset.count = String(creds.length);
    }
    list.addEventListener('click', async (ev) => {
      const button = ev.target.closest('button');
      if (!button) return;
      const li = button.closest('li');
      const id = li.dataset.id;
      try {
        if (button.dataset.action === 'remove') {
          await api('DELETE', '/api/credentials/' + encodeURIComponent(id));
          say(t('js-removed'), 'ok');
          await load();
        } else if (button.dataset.action === 'rename') {
          const field = li.querySelector('[data-field=name]');
          const input = document.createElement('input');
          input.value = field.textContent;
          input.maxLength = 64;
          input.dataset.field = 'new-name';
          input.setAttribute('aria-label', t('js-new-name'));
          field.replaceWith(input);
          button.textContent = t('js-save');
          button.dataset.action = 'save';
          input.focus();
        } else if (button.dataset.action === 'save') {
          const input = li.querySelector('[data-field=new-name]');
          await api('PATCH', '/api/credentials/' + encodeURIComponent(id), { name: input.value.trim() });
          say(t('js-renamed'), 'ok');
          await load();
        }
      } catch (e) {
        say(explain(e), 'error');
      }
    });
    const buttons = [$('add-platform'), $('add-roaming')];
    const add = (authenticator) => async () => {
      busy(buttons, true);
      say(authenticator === 'roaming' ? t('js-tap-key') : t('js-follow-device'));
      try {
        await register({ username: app.dataset.email, display_name: app.dataset.name, authenticator });
        say(authenticator === 'roaming' ? t('js-key-added') : t('js-passkey-added'), 'ok');
        await load();
      } catch (e) {
        say(explain(e), 'error');
      }
      busy(buttons, false);
    };
    buttons[0].addEventListener('click', add('platform'));
    buttons[1].addEventListener('click', add('roaming'));
    try { await load(); } catch (e) { say(explain(e), 'error'); }
    await socialLinks();
  }

  // Accounts at Google, GitHub … linked to this one: link (a visit to the provider, then a
  // confirmation page) or unlink. Linking needs a passkey sign-in in the last minutes: when the
  // server answers passkey_required, the page offers the passkey, then starts the link again.
  async function socialLinks() {
    const list = $('social');
    if (!list) return;
    async function load() {
      const providers = await api('GET', '/api/social');
      list.replaceChildren(...providers.map((p) => {
        const li = document.createElement('li');
        li.dataset.provider = p.provider;
        const label = document.createElement('span');
        label.textContent = p.linked ? p.label + (p.email ? ' (' + p.email + ')' : '') : p.label;
        if (p.linked) {
          const unlink = document.createElement('button');
          unlink.type = 'button';
          unlink.className = 'secondary';
          unlink.dataset.action = 'unlink';
          unlink.textContent = t('js-unlink');
          li.append(label, unlink);
        } else {
          const link = document.createElement('button');
          link.type = 'button';
          link.className = 'secondary';
          link.dataset.action = 'link';
          link.textContent = t('js-link');
          li.append(label, link);
        }
        return li;
      }));
      $('social-section').hidden = providers.length === 0;
    }
    const stepUp = $('step-up');
    async function link(provider) {
      try {
        const started = await api('POST', '/api/social/' + encodeURIComponent(provider));
        window.location.assign(started.redirect);
      } catch (e) {
        if (e.code !== 'passkey_required') { say(explain(e), 'error'); return; }
        if (app.dataset.count === '0') {
          say(t('js-link-add-first'), 'error');
          return;
        }
        say(t('js-link-confirm-first'), 'error');
        stepUp.dataset.provider = provider;
        stepUp.hidden = false;
        stepUp.focus();
      }
    }
    stepUp.addEventListener('click', async () => {
      busy([stepUp], true);
      say(t('js-follow-device'));
      try {
        const done = await signIn(app.dataset.email);
        stepUp.hidden = true;
        // Another account's passkey signed this browser in as someone else: show their page.
        if (!done || !done.user || done.user.email !== app.dataset.email) { window.location.reload(); return; }
        await link(stepUp.dataset.provider);
      } catch (e) {
        say(explain(e), 'error');
      }
      busy([stepUp], false);
    });
    list.addEventListener('click', async (ev) => {
      const button = ev.target.closest('button[data-action]');
      if (!button) return;
      const provider = button.closest('li').dataset.provider;
      if (button.dataset.action === 'link') { await link(provider); return; }
      if (button.dataset.action !== 'unlink') return;
      try {
        await api('DELETE', '/api/social/' + encodeURIComponent(provider));
        say(t('js-unlinked'), 'ok');
        await load();
      } catch (e) {
        say(explain(e), 'error');
      }
    });
    try { await load(); } catch (e) { say(explain(e), 'error'); }
  }

  document.addEventListener('DOMContentLoaded', () => {
    const page = app.dataset.page;
    if (['invite', 'recover', 'account', 'signin', 'login', 'offer-passkey'].includes(page) && !supported()) {
      say(t('js-unsupported-browser'), 'error');
      document.querySelectorAll('button').forEach((b) => { b.disabled = true; });
      return;
    }
    if (page === 'invite' || page === 'recover') invitePage();
    else if (page === 'signin') signInPage();
    else if (page === 'login') loginPage();
    else if (page === 'account') accountPage();
    else if (page === 'offer-passkey') offerPasskeyPage();
    else if (page === 'device') devicePage();
    app.dataset.ready = '1';
  });
})();
