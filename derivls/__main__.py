from derivls.cli import main

raise SystemExit(main())
