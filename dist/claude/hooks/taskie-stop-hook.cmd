@echo off
rem Taskie Stop hook launcher for Windows (docs/windows.md): what hooks/taskie-stop-hook
rem does under sh, for a client that runs its hooks through PowerShell (Codex's
rem commandWindows, Gemini, Claude Code without Git Bash). It runs the native
rem taskie-hook.exe from the first place that has it: PATH, %CARGO_HOME%\bin,
rem %USERPROFILE%\.cargo\bin, npm's global packages (%NPM_CONFIG_PREFIX% or %APPDATA%\npm,
rem where npm keeps them in node_modules beside its .cmd shims), then the plugin's
rem checkout's target\release. Never npm's taskie-hook.cmd: that shim starts Node at every
rem stop. stdin reaches taskie-hook untouched; if none is found it prints one
rem systemMessage naming the install and exits 0, as a hook must.
setlocal
if defined TASKIE_HOOK_SKIP if not "%TASKIE_HOOK_SKIP%"=="0" if /i not "%TASKIE_HOOK_SKIP%"=="false" exit /b 0
set "TASKIE_PLUGIN_ROOT=%~dp0.."
rem The checkout this launcher belongs to (the copies in dist\<client>\hooks name it
rem two levels further up).
set "checkout=%~dp0..\..\.."
set "hook="
for %%i in (taskie-hook.exe) do set "hook=%%~$PATH:i"
if not defined hook if defined CARGO_HOME call :try "%CARGO_HOME%\bin"
if not defined hook if defined USERPROFILE call :try "%USERPROFILE%\.cargo\bin"
if not defined hook if defined NPM_CONFIG_PREFIX call :npm "%NPM_CONFIG_PREFIX%"
if not defined hook if defined APPDATA call :npm "%APPDATA%\npm"
if not defined hook call :try "%checkout%\target\release"
if not defined hook goto missing
"%hook%" %*
exit /b 0

:npm
call :try "%~1\node_modules\taskie\node_modules\taskie-win32-x64\bin"
if not defined hook call :try "%~1\node_modules\taskie-win32-x64\bin"
exit /b 0

:try
if exist "%~1\taskie-hook.exe" set "hook=%~1\taskie-hook.exe"
exit /b 0

:missing
echo {"systemMessage":"Taskie: taskie-hook.exe is not installed. Install it with Rust (cargo install --locked --path a clone of the Taskie repository) or from the win32-x64 npm tarballs, as the README's Install says."}
exit /b 0
