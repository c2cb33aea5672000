// The to-do page: supabase-js against the Quire database this page was published with.
// The page asks its own origin where that database is (`-/db.json` under the page's address,
// `/todo/-/db.json` for a page at `/todo/`: its URL and anon key), so no key is written in
// this file. Each signed-in user sees only their own rows: the
// `todos` table's row-level security policy (schema.sql) does that, not this code.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  let client = null;
  let shownUser = null;

  function say(text) {
    $('status').textContent = text;
  }

  function showError(text) {
    $('error').textContent = text;
    $('error').hidden = false;
  }

  function clearError() {
    $('error').textContent = '';
    $('error').hidden = true;
  }

  // What went wrong, in the server's words: GoTrue's `msg` (supabase-js's AuthError
  // message), PostgREST's `message`, or why the request did not get through.
  function explain(what, error) {
    const words = (error && (error.message || error.msg || error.error_description)) || String(error);
    if (/failed to fetch|networkerror|load failed/i.test(words)) {
      return `${what}: the database could not be reached (${words}).`;
    }
    return `${what}: ${words}`;
  }

  // Disables a form's controls while its request is under way.
  function busy(form, on) {
    for (const control of form.querySelectorAll('input, button')) {
      control.disabled = on;
    }
  }

  function showSignedOut() {
    shownUser = null;
    $('todos').hidden = true;
    $('list').replaceChildren();
    $('auth').hidden = false;
    say('Sign in to see your to-dos, or sign up with an email and a password.');
  }

  async function showSignedIn(user) {
    const first = !shownUser || shownUser.id !== user.id;
    shownUser = user;
    $('user-email').textContent = user.email;
    $('auth').hidden = true;
    $('todos').hidden = false;
    $('password').value = '';
    if (first) {
      await loadTodos();
    }
  }

  function render(session) {
    if (session && session.user) {
      showSignedIn(session.user);
    } else {
      showSignedOut();
    }
  }

  function showEmpty() {
    $('empty').hidden = $('list').children.length > 0;
  }

  function item(todo) {
    const li = document.createElement('li');
    li.dataset.id = String(todo.id);
    li.classList.toggle('done', todo.done);

    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = todo.done;
    box.addEventListener('change', () => toggle(li, box));
    const task = document.createElement('span');
    task.className = 'task';
    task.textContent = todo.task;
    label.append(box, task);

    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'delete';
    remove.textContent = 'Delete';
    remove.setAttribute('aria-label', `Delete “${todo.task}”`);
    remove.addEventListener('click', () => removeTodo(li, remove));

    li.append(label, remove);
    return li;
  }

  async function loadTodos() {
    say('Loading your to-dos…');
    const { data, error } = await client
      .from('todos')
      .select('id, task, done')
      .order('id', { ascending: true });
    if (error) {
      say('');
      showError(explain('Your to-dos could not be loaded', error));
      return;
    }
    $('list').replaceChildren(...data.map(item));
    showEmpty();
    say(`${data.length} to-do${data.length === 1 ? '' : 's'}.`);
  }

  async function addTodo(event) {
    event.preventDefault();
    clearError();
    const form = $('add-form');
    const task = $('task').value.trim();
    if (!task) {
      showError('Write what there is to do first.');
      return;
    }
    busy(form, true);
    // user_id is left to the table's default, auth.uid(): the signed-in user.
    const { data, error } = await client
      .from('todos')
      .insert({ task })
      .select('id, task, done')
      .single();
    busy(form, false);
    if (error) {
      showError(explain('The to-do was not added', error));
      return;
    }
    $('list').append(item(data));
    showEmpty();
    $('task').value = '';
    $('task').focus();
    say(`Added “${data.task}”.`);
  }

  async function toggle(li, box) {
    clearError();
    box.disabled = true;
    const { error } = await client
      .from('todos')
      .update({ done: box.checked })
      .eq('id', li.dataset.id);
    box.disabled = false;
    if (error) {
      box.checked = !box.checked;
      showError(explain('The to-do was not changed', error));
      return;
    }
    li.classList.toggle('done', box.checked);
  }

  async function removeTodo(li, button) {
    clearError();
    button.disabled = true;
    const { error } = await client.from('todos').delete().eq('id', li.dataset.id);
    if (error) {
      button.disabled = false;
      showError(explain('The to-do was not deleted', error));
      return;
    }
    li.remove();
    showEmpty();
    say('Deleted.');
  }

  async function signInOrUp(event) {
    event.preventDefault();
    clearError();
    const form = $('auth-form');
    const signingUp = event.submitter && event.submitter.id === 'sign-up';
    const credentials = { email: $('email').value.trim(), password: $('password').value };
    busy(form, true);
    say(signingUp ? 'Signing up…' : 'Signing in…');
    const { data, error } = signingUp
      ? await client.auth.signUp(credentials)
      : await client.auth.signInWithPassword(credentials);
    busy(form, false);
    if (error) {
      say('');
      showError(explain(signingUp ? 'Sign-up failed' : 'Sign-in failed', error));
      return;
    }
    if (!data.session) {
      // The database asks new users to confirm their address first.
      say(`Check ${credentials.email} for a confirmation link, then sign in.`);
    }
    // A session: onAuthStateChange shows the list.
  }

  async function signOut() {
    clearError();
    $('sign-out').disabled = true;
    const { error } = await client.auth.signOut();
    $('sign-out').disabled = false;
    if (error) {
      showError(explain('Sign-out failed', error));
    }
  }

  async function start() {
    if (!window.supabase || typeof window.supabase.createClient !== 'function') {
      say('');
      showError(
        'supabase.js is missing from this page: run examples/todo/fetch-supabase-js.sh, then publish again.'
      );
      return;
    }
    let config;
    try {
      // Relative: the page's own `-/db.json`, wherever the page is published.
      const response = await fetch('-/db.json', { cache: 'no-store' });
      if (!response.ok) {
        throw new Error(`-/db.json answered ${response.status}`);
      }
      config = await response.json();
    } catch (e) {
      say('');
      showError(
        `This page does not know its database (${e.message}). Publish it with --database SLUG, ` +
          'for a database whose data API is on.'
      );
      return;
    }
    client = window.supabase.createClient(config.url, config.anonKey);
    $('auth-form').addEventListener('submit', signInOrUp);
    $('add-form').addEventListener('submit', addTodo);
    $('sign-out').addEventListener('click', signOut);
    // The stored session (localStorage) comes first, as INITIAL_SESSION; then every sign-in,
    // sign-out and refresh. supabase-js asks that the callback not await its own calls.
    client.auth.onAuthStateChange((_event, session) => {
      setTimeout(() => render(session), 0);
    });
  }

  start();
})();
