-- Settings: one home for runtime configuration inside the database.

-- exo.settings: every setting with its value and what it does.
create or replace view exo.settings as
    select key, value, description, updated_at
    from exo_private.settings;
comment on view exo.settings is 'Every runtime setting with its value and what it does.';

-- exo.setting: one setting's value.
create or replace function exo.setting(setting_key text)
returns jsonb
language sql stable
security definer
set search_path = exo_private, pg_temp
as $$
    select value from exo_private.settings where key = setting_key
$$;
comment on function exo.setting(text) is 'The value of one setting (jsonb), or null when unset.';

-- exo_private.set_setting: create or change a setting.
create or replace function exo_private.set_setting(setting_key text, new_value jsonb, what text default null)
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    update settings
       set value = new_value, description = coalesce(what, settings.description), updated_at = now()
     where key = setting_key;
    if found then
        return;
    end if;
    if what is null then
        raise exception 'setting % does not exist yet: give it a description', setting_key;
    end if;
    insert into settings (key, value, description) values (setting_key, new_value, what);
end
$$;
comment on function exo_private.set_setting(text, jsonb, text) is
    'Create or change a setting; a new one needs a description.';
