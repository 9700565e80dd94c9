#include <dirent.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/syscall.h>
int main(void){
  int pp=getppid(); char p[64]; snprintf(p,sizeof p,"/proc/%d/task",pp);
  int hits=0, tries=0;
  for(int round=0; round<50; round++){
    DIR*d=opendir(p); if(!d) break; struct dirent*e;
    while((e=readdir(d))){ if(e->d_name[0]=='.') continue;
      int tid=atoi(e->d_name); tries++;
      if(syscall(SYS_tgkill,pp,tid,0)==0) hits++; }
    closedir(d);
  }
  printf("%d %d\n",hits,tries); return 0; }
