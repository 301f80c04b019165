// Login: the token stays in memory (a reload means logging in again); the role is inferred after login.
// @ts-check
import { h } from '../util.js';
import { login } from '../api.js';

/** @typedef {import('../api.js').ApiError} ApiError */

/**
 * @param {HTMLElement} root
 * @param {string} reason  why the last session ended ('' when it did not)
 */
export function mountLogin(root, reason) {
  const user = h('input#username', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const pass = h('input#password', {
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const err = h('p.form-error', { role: 'alert', hidden: !reason }, reason || '');
  const btn = h('button.btn.primary.wide', { type: 'submit' }, 'Log in');
  const form = h(
    'form.login-card',
    {
      /** @param {SubmitEvent} e */
      async onsubmit(e) {
        e.preventDefault();
        err.hidden = true;
        btn.disabled = true;
        btn.textContent = 'Logging in…';
        try {
          await login(user.value.trim(), pass.value);
        } catch (e2) {
          err.textContent =
            /** @type {ApiError} */ (e2).status === 401
              ? 'Wrong user name or password.'
              : /** @type {ApiError} */ (e2).status === 429
                ? 'Too many failed attempts; wait 30 seconds.'
                : /** @type {Error} */ (e2).message;
          err.hidden = false;
          btn.disabled = false;
          btn.textContent = 'Log in';
          pass.select();
        }
      },
    },
    h('div.brand-big', h('span.logo', { 'aria-hidden': 'true' }), 'Sentinel'),
    h('h1', 'Log in'),
    h('label', { for: 'username' }, 'User name'),
    user,
    h('label', { for: 'password' }, 'Password'),
    pass,
    err,
    btn,
    h('p.hint', 'Your browser must present the client certificate (client.p12) issued by this service.'),
  );
  root.append(h('section.login', form));
  user.focus();
  return () => {};
}
